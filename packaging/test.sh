#!/bin/bash
# The whole test suite from a fresh Debian 12 machine: installs what is
# missing, builds everything (packaging/build.sh: warnings are errors; the
# build demo.sh shares), and runs every test (unit, integration with the
# real binaries on loopback, the test lab, fuzz corpora, style), then the
# sanitizer tier: a second build with ASan and UBSan (build-asan beside the
# build; GANTRY_SANITIZER_BUILD_DIR names another), made cheap to build (a
# unity build at -Og -g1: CMakeLists.txt, tests/lab/README.md), runs every
# unit test (which the plain build then leaves out: compiled and run once)
# and the integration tests of a job's whole life, and the lab's sanitizer
# scenario uses its daemons. Then the thread tier: the unit tests of the
# threaded code (tests/unit/CMakeLists.txt: THREADED) again, built with
# ThreadSanitizer (build-tsan; GANTRY_THREAD_SANITIZER_BUILD_DIR
# names another; suppressions in tests/tsan.supp). GANTRY_SANITIZER_BUILD=0
# skips both sanitizer builds and tiers (the lab scenario then skips,
# saying so; the unit tests run in the plain build). Exits non-zero when
# any run failed.
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
    -h|--help) sed -n '2,25p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) ctest_args+=("$arg") ;;
  esac
done
# How long each phase took, printed at the end (docs/development.md keeps
# CI's figures).
phases=()
phase_start=$SECONDS
end_phase() {
  phases+=("$1 $((SECONDS - phase_start)) s")
  phase_start=$SECONDS
}
# Whether the sanitizer tier runs: the whole suite (no ctest arguments)
# with the sanitizer build. It runs every unit test, so the unit tests are
# then compiled and run only there; otherwise (--quick, -R ...,
# GANTRY_SANITIZER_BUILD=0) in the plain build.
sanitizer_tier=0
if [ "$quick" = 0 ] && [ "${GANTRY_SANITIZER_BUILD:-1}" = 1 ] &&
   [ ${#ctest_args[@]} -eq 0 ]; then
  sanitizer_tier=1
fi
"$root/packaging/install-deps.sh" --test
end_phase "dependencies:"
if [ "$sanitizer_tier" = 1 ]; then
  "$root/packaging/build.sh" -DGANTRY_BUILD_UNIT_TESTS=OFF
else
  "$root/packaging/build.sh" -DGANTRY_BUILD_UNIT_TESTS=ON
fi
end_phase "build:"
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
    -DGANTRY_WERROR=OFF gantryd gantry-agent gantry unit_tests
  end_phase "sanitizer build:"
fi
# Runs ctest in a build, keeping its output (Testing/suite.log) so that the
# failures of both runs are listed again at the very end, where a CI log
# that keeps only its tail still shows them.
run_ctest() {
  local dir="$1"; shift
  mkdir -p "$dir/Testing"
  (cd "$dir" && ctest --output-on-failure -j "$(nproc)" --timeout 600 "$@" \
     2>&1 | tee Testing/suite.log; exit "${PIPESTATUS[0]}")
}
threads="${GANTRY_THREAD_SANITIZER_BUILD_DIR:-$build-tsan}"
rm -f "$build/Testing/suite.log" "$sanitized/Testing/suite.log" \
  "$threads/Testing/suite.log"
status=0
run_ctest "$build" "${ctest_args[@]}" || status=$?
end_phase "tests:"
if [ "$sanitizer_tier" = 1 ]; then
  # The sanitizer tier: every unit test, and the integration tests that walk
  # a job's whole life (submit, gang start, steps, cancel, node loss,
  # controller restart), against the ASan+UBSan binaries; any report fails
  # (tests/integration/gantry_cluster.py scans the daemons' logs). The lab's
  # sanitized scenario ran above with the rest of the suite.
  export ASAN_OPTIONS="halt_on_error=1:detect_leaks=0:print_summary=1"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
  run_ctest "$sanitized" -R "$sanitized_tier" || status=$?
  end_phase "sanitizer tier:"
  # The thread tier: the threaded code's unit tests under ThreadSanitizer,
  # which cannot share a build with ASan. Its own build, of those tests and
  # what they link only (a TSan build defines no other test binary); any
  # report fails the test.
  GANTRY_BUILD_DIR="$threads" \
    "$root/packaging/build.sh" -DGANTRY_SANITIZE_THREADS=ON \
    -DGANTRY_BUILD_TESTS=ON -DGANTRY_WERROR=OFF unit_tests
  end_phase "thread sanitizer build:"
  # Left out: the three tests whose threads are gRPC's own, talking to
  # etcd or to another controller over real channels. gRPC orders them
  # with atomics TSan cannot see (Debian builds it uninstrumented), so
  # every hand-off reads as a race (300 reports, none in our code); the
  # ASan tier and -Wthread-safety (style.thread_safety) cover that code.
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/tests/tsan.supp"
  run_ctest "$threads" -L '^unit$' \
    -E '^unit\.(replication_log_test|snapshot_transfer_test|standby_service_test)\.' ||
    status=$?
  end_phase "thread tier:"
fi
echo "== time taken: ${phases[*]/%/;}"
if [ "$status" != 0 ]; then
  # The failures once more, each run again alone: a test that passes now
  # failed on timing or load (still a failure, but a different one to fix),
  # and the tail of what it printed lands where the log is read.
  for dir in "$build" "$sanitized" "$threads"; do
    [ -f "$dir/Testing/suite.log" ] || continue
    grep -q '^The following tests FAILED:' "$dir/Testing/suite.log" || continue
    echo "== run again alone, in $dir:"
    (cd "$dir" && ctest --rerun-failed --output-on-failure --timeout 600 \
       2>&1 | tail -n 80) || true
    echo "== failed in $dir:"
    sed -n '/^The following tests FAILED:/,$p' "$dir/Testing/suite.log"
  done
fi
exit "$status"
