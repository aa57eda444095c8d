#!/bin/bash
# Builds Gantry's Debian packages (gantry-controller, gantry-agent,
# gantry-client, gantry-slurm-compat) into BUILD/debs: builds what is out of
# date, then runs CPack. BUILD is GANTRY_BUILD_DIR, else ./build (configured
# by packaging/build.sh when it is not yet). Prints the .deb paths.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GANTRY_BUILD_DIR:-$root/build}"
if [ ! -f "$build/CPackConfig.cmake" ]; then
  GANTRY_BUILD_DIR="$build" "$root/packaging/build.sh"
fi
# Only what the packages hold, so a broken test does not stop a package.
targets=(gantryd gantry-agent gantry)
if ninja -C "$build" -t query man_pages >/dev/null 2>&1; then targets+=(man_pages); fi
ninja -C "$build" "${targets[@]}" >/dev/null
rm -rf "$build/debs"
(cd "$build" && cpack -G DEB >/dev/null)
ls "$build"/debs/*.deb
