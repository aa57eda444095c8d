#!/bin/bash
# The whole test suite from a fresh Debian 12 machine: installs what is
# missing, builds everything (packaging/build.sh: warnings are errors; the
# build demo.sh shares), and runs every test (unit, integration with the
# real binaries on loopback, the test lab, fuzz corpora, style). The
# lab's sanitizer scenario runs the daemons and the CLI from a second build
# with ASan and UBSan (build-asan beside the build;
# GANTRY_SANITIZER_BUILD_DIR names another), made cheap to build (a unity
# build at -Og: CMakeLists.txt, tests/lab/README.md).
# GANTRY_SANITIZER_BUILD=0 skips that build, and the scenario then skips,
# saying so.
#
#   packaging/test.sh           everything (what CI runs: .ci/run)
#   packaging/test.sh --quick   the inner loop: unit tests, fuzz corpora
#                               and style checks only (no daemons started,
#                               no sanitizer build); a few minutes after an
#                               incremental build
#
# Anything after the options goes to ctest (-R NAME, -L LABEL, -V ...).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
quick=0
ctest_args=()
for arg in "$@"; do
  case "$arg" in
    --quick) quick=1 ;;
    -h|--help) sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) ctest_args+=("$arg") ;;
  esac
done
"$root/packaging/install-deps.sh"
"$root/packaging/build.sh"
build="${GANTRY_BUILD_DIR:-$root/build}"
if [ "$quick" = 1 ]; then
  cd "$build"
  exec ctest --output-on-failure -j "$(nproc)" --timeout 600 \
    -L '^(unit|fuzz|style)$' "${ctest_args[@]}"
fi
if [ "${GANTRY_SANITIZER_BUILD:-1}" = 1 ]; then
  # Warnings are not errors here: gcc 12 warns falsely under the sanitizers'
  # instrumentation, and the plain build above already holds the code to
  # -Werror.
  GANTRY_BUILD_DIR="${GANTRY_SANITIZER_BUILD_DIR:-$build-asan}" \
    "$root/packaging/build.sh" -DGANTRY_SANITIZE=ON -DGANTRY_BUILD_TESTS=OFF \
    -DGANTRY_WERROR=OFF gantryd gantry-agent gantry
fi
cd "$build"
ctest --output-on-failure -j "$(nproc)" --timeout 600 "${ctest_args[@]}"
