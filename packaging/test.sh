#!/bin/bash
# The whole test suite from a fresh Debian 12 machine: installs what is
# missing, builds everything (packaging/build.sh: warnings are errors; the
# build demo.sh shares), and runs every test (unit, integration with the
# real binaries on loopback, fuzz corpora, format).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/packaging/install-deps.sh"
"$root/packaging/build.sh"
cd "${GANTRY_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j "$(nproc)" --timeout 600
