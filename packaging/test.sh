#!/bin/bash
# The whole test suite from a fresh Debian 12 machine: installs what is
# missing, builds everything (packaging/build.sh: warnings are errors; the
# build demo.sh shares), and runs every test (unit, integration with the
# real binaries on loopback, the test lab, fuzz corpora, style), then the
# sanitizer tier: a second build with ASan and UBSan (build-asan beside the
# build; GANTRY_SANITIZER_BUILD_DIR names another), made cheap to build (a
# unity build at -Og -g1: CMakeLists.txt, tests/lab/README.md), runs every
# unit test and the integration tests of a job's whole life, and the lab's
# sanitizer scenario uses its daemons. GANTRY_SANITIZER_BUILD=0 skips that
# build and tier (the lab scenario then skips, saying so). Exits non-zero
# when either run failed.
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
    -h|--help) sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) ctest_args+=("$arg") ;;
  esac
done
"$root/packaging/install-deps.sh"
"$root/packaging/build.sh"
build="${GANTRY_BUILD_DIR:-$root/build}"
# The sanitizer tier's tests (below).
sanitized_tier='^(unit\.|integration\.(multinode_job|cancel|steps|node_failure|controller_restart|agent_stop)$)'
if [ "$quick" = 1 ]; then
  cd "$build"
  exec ctest --output-on-failure -j "$(nproc)" --timeout 600 \
    -L '^(unit|fuzz|style)$' "${ctest_args[@]}"
fi
sanitized="${GANTRY_SANITIZER_BUILD_DIR:-$build-asan}"
if [ "${GANTRY_SANITIZER_BUILD:-1}" = 1 ]; then
  # Warnings are not errors here: gcc 12 warns falsely under the sanitizers'
  # instrumentation, and the plain build above already holds the code to
  # -Werror. Only what the sanitizer tier runs is built.
  GANTRY_BUILD_DIR="$sanitized" \
    "$root/packaging/build.sh" -DGANTRY_SANITIZE=ON -DGANTRY_BUILD_TESTS=ON \
    -DGANTRY_WERROR=OFF gantryd gantry-agent gantry gantry-fleet unit_tests
fi
status=0
(cd "$build" && ctest --output-on-failure -j "$(nproc)" --timeout 600 "${ctest_args[@]}") || status=$?
if [ "${GANTRY_SANITIZER_BUILD:-1}" = 1 ] && [ ${#ctest_args[@]} -eq 0 ]; then
  # The sanitizer tier: every unit test, and the integration tests that walk
  # a job's whole life (submit, gang start, steps, cancel, node loss,
  # controller restart), against the ASan+UBSan binaries; any report fails
  # (tests/integration/gantry_cluster.py scans the daemons' logs). The lab's
  # sanitized scenario ran above with the rest of the suite.
  export ASAN_OPTIONS="halt_on_error=1:detect_leaks=0:print_summary=1"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
  (cd "$sanitized" && ctest --output-on-failure -j "$(nproc)" --timeout 600 \
     -R "$sanitized_tier") || status=$?
fi
exit "$status"
