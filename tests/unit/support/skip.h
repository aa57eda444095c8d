// Skipping a test case that cannot run here (no ../shared/data, not root),
// so that CTest reports it as skipped instead of passed.
//
// Catch2 v2 (Debian 12 ships 2.13) has no SKIP, so GANTRY_SKIP stands in
// for Catch2 v3's: it warns with the reason, marks the running test case
// skipped and returns from it. test_main.cc then exits with
// kSkippedExitCode when every test case it ran was skipped and none failed,
// the exit code of Catch2 v3 for the same run; tests/unit/CMakeLists.txt
// registers it as each test's SKIP_RETURN_CODE. A run of several cases of
// which only some skipped still exits 0, with the warnings in its output.
//
// Not thread-safe: call from the thread that runs the test case.
#pragma once

#include <catch2/catch.hpp>

namespace gantry::testing {

// What a test binary returns when all it ran was skipped (Catch2 v3's code).
inline constexpr int kSkippedExitCode = 4;

// Marks the running test case as skipped (defined in test_main.cc).
void MarkCurrentTestCaseSkipped();

}  // namespace gantry::testing

// Skips the rest of the running test case, saying why. `reason` is streamed
// like WARN's message: GANTRY_SKIP(path << " is absent").
#define GANTRY_SKIP(reason)                          \
  do {                                               \
    WARN("skipped: " << reason);                     \
    ::gantry::testing::MarkCurrentTestCaseSkipped(); \
    return;                                          \
  } while (0)
