#!/bin/bash
# Configures and builds Gantry into ./build (ccache and ninja: a rebuild
# after a small change takes seconds).
#
#   packaging/build.sh [-DOPTION=VALUE...] [TARGET...]
#
# Arguments that start with "-" go to cmake, after the defaults below, so
# they win; the others are the ninja targets to build (none: everything).
# demo.sh and test.sh both build through here with the same configuration
# (warnings are errors, as in CI), so whichever runs second recompiles
# nothing the first built: demo.sh builds the daemons and the CLI, test.sh
# everything.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GANTRY_BUILD_DIR:-$root/build}"
jobs="$(nproc)"
cmake_args=()
targets=()
for arg in "$@"; do
  case "$arg" in
    -*) cmake_args+=("$arg") ;;
    *) targets+=("$arg") ;;
  esac
done
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGANTRY_WERROR=ON \
  "${cmake_args[@]}" >/dev/null
ninja -C "$build" -j "$jobs" "${targets[@]}"
