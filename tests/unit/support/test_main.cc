// main() of every unit test binary: Catch2's session, plus the exit code
// that tells CTest a test case was skipped (support/skip.h).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "tests/unit/support/skip.h"

namespace gantry::testing {
namespace {

// The test cases this run started and those of them that skipped. Catch2
// runs test cases one after another on the main thread.
std::set<std::string>& StartedTestCases() {
  static std::set<std::string> started;
  return started;
}
std::set<std::string>& SkippedTestCases() {
  static std::set<std::string> skipped;
  return skipped;
}

class TestCaseCounter : public Catch::TestEventListenerBase {
 public:
  using TestEventListenerBase::TestEventListenerBase;
  void testCaseStarting(const Catch::TestCaseInfo& info) override {
    TestEventListenerBase::testCaseStarting(info);
    StartedTestCases().insert(info.name);
  }
};
CATCH_REGISTER_LISTENER(TestCaseCounter)

}  // namespace

void MarkCurrentTestCaseSkipped() {
  SkippedTestCases().insert(Catch::getResultCapture().getCurrentTestName());
}

}  // namespace gantry::testing

int main(int argc, char* argv[]) {
  // Nonzero is a failure count, or with --list-* options a count of what
  // was listed: passed on as Catch2 returns it.
  Catch::Session session;
  if (const int bad_command_line = session.applyCommandLine(argc, argv)) {
    return bad_command_line;
  }
  // Every test case is tagged with its file ([#hostlist_test]): a test
  // binary holds a whole folder's files, and CTest registers each file's
  // cases by that tag (tests/unit/CMakeLists.txt). Set here, not as an
  // option, because CTest's discovery lists tests without extra options.
  session.configData().filenamesAsTags = true;
  const int result = session.run();
  const auto& started = gantry::testing::StartedTestCases();
  if (result == 0 && !started.empty() &&
      gantry::testing::SkippedTestCases() == started) {
    return gantry::testing::kSkippedExitCode;
  }
  return result;
}
