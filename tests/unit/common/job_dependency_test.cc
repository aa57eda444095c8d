#include "common/job_dependency.h"

#include <map>

#include <catch2/catch.hpp>

namespace gantry {
namespace job_dependency_test {

using Kind = DependencyTerm::Kind;
using Phase = DependedJob::Phase;
using State = DependencyVerdict::State;

JobDependency Parsed(const std::string& text) {
  absl::StatusOr<JobDependency> parsed = ParseDependency(text);
  REQUIRE(parsed.ok());
  return *parsed;
}

std::string ErrorOf(const std::string& text) {
  absl::StatusOr<JobDependency> parsed = ParseDependency(text);
  REQUIRE_FALSE(parsed.ok());
  return std::string(parsed.status().message());
}

// Jobs 1..n by phase; job 1 started at t=1000 ms.
DependencyVerdict Evaluate(const std::string& text,
                           const std::map<uint64_t, Phase>& jobs,
                           bool singleton_blocked = false,
                           int64_t now_ms = 10'000) {
  return EvaluateDependency(
      Parsed(text),
      [&](uint64_t id) -> std::optional<DependedJob> {
        auto it = jobs.find(id);
        if (it == jobs.end()) return std::nullopt;
        return DependedJob{it->second,
                           it->second == Phase::kPending ? 0 : 1000};
      },
      singleton_blocked, now_ms);
}

TEST_CASE("dependency terms parse as sbatch writes them") {
  JobDependency all = Parsed("afterok:12:13,afterany:7,after:5+10,singleton");
  CHECK_FALSE(all.any_of);
  REQUIRE(all.terms.size() == 5);
  CHECK(all.terms[0] == DependencyTerm{Kind::kAfterOk, 12, 0, std::nullopt});
  CHECK(all.terms[1] == DependencyTerm{Kind::kAfterOk, 13, 0, std::nullopt});
  CHECK(all.terms[2] == DependencyTerm{Kind::kAfterAny, 7, 0, std::nullopt});
  CHECK(all.terms[3] == DependencyTerm{Kind::kAfter, 5, 10, std::nullopt});
  CHECK(all.terms[4].kind == Kind::kSingleton);
  CHECK(FormatDependency(all) ==
        "afterok:12:13,afterany:7,after:5+10,singleton");

  JobDependency any = Parsed("afternotok:3?afterok:4");
  CHECK(any.any_of);
  CHECK(FormatDependency(any) == "afternotok:3?afterok:4");
  CHECK(Parsed("").empty());

  JobDependency task = Parsed("afterok:12_3:14");
  CHECK(task.terms[0] == DependencyTerm{Kind::kAfterOk, 12, 0, 3});
  CHECK(FormatDependency(task) == "afterok:12_3:14");
}

TEST_CASE("malformed dependencies are refused with the part at fault") {
  CHECK_THAT(ErrorOf("afterok"), Catch::Contains("no job id"));
  CHECK_THAT(ErrorOf("afterok:x"), Catch::Contains("\"x\" is not a job id"));
  CHECK_THAT(ErrorOf("afterok:0"), Catch::Contains("not a job id"));
  CHECK_THAT(ErrorOf("afterwards:1"), Catch::Contains("expected after"));
  CHECK_THAT(ErrorOf("afterok:1,"), Catch::Contains("empty term"));
  CHECK_THAT(ErrorOf("afterok:1,afterok:2?afterok:3"),
             Catch::Contains("not both"));
  CHECK_THAT(ErrorOf("afterok:1+5"),
             Catch::Contains("only allowed with after"));
  CHECK_THAT(ErrorOf("after:1+x"), Catch::Contains("whole minutes"));
  CHECK_THAT(ErrorOf("afterok:12_x"), Catch::Contains("array task"));
  CHECK_THAT(ErrorOf("afterok:_3"), Catch::Contains("not a job id"));
  CHECK_THAT(ErrorOf("afterok:99999999999999999999999"),
             Catch::Contains("not a job id"));
}

TEST_CASE("afterok waits, then starts on success and never on failure") {
  CHECK(Evaluate("afterok:1", {{1, Phase::kRunning}}).state == State::kWaiting);
  CHECK(Evaluate("afterok:1", {{1, Phase::kCompleted}}).state ==
        State::kSatisfied);
  DependencyVerdict failed = Evaluate("afterok:1", {{1, Phase::kFailed}});
  CHECK(failed.state == State::kNever);
  CHECK_THAT(failed.detail, Catch::Contains("job 1 did not complete"));
  CHECK(Evaluate("afterok:9", {}).state == State::kNever);
}

TEST_CASE("afternotok, afterany and after follow Slurm's meaning") {
  CHECK(Evaluate("afternotok:1", {{1, Phase::kFailed}}).state ==
        State::kSatisfied);
  CHECK(Evaluate("afternotok:1", {{1, Phase::kCompleted}}).state ==
        State::kNever);
  CHECK(Evaluate("afterany:1", {{1, Phase::kFailed}}).state ==
        State::kSatisfied);
  CHECK(Evaluate("afterany:1", {{1, Phase::kRunning}}).state ==
        State::kWaiting);
  CHECK(Evaluate("after:1", {{1, Phase::kPending}}).state == State::kWaiting);
  CHECK(Evaluate("after:1", {{1, Phase::kRunning}}).state == State::kSatisfied);
}

TEST_CASE("after with a delay says when it will hold") {
  // Job 1 started at 1 s; +1 minute holds from 61 s.
  DependencyVerdict early =
      Evaluate("after:1+1", {{1, Phase::kRunning}}, false, 30'000);
  CHECK(early.state == State::kWaiting);
  CHECK(early.ready_at_ms == 61'000);
  CHECK(Evaluate("after:1+1", {{1, Phase::kRunning}}, false, 61'000).state ==
        State::kSatisfied);
}

TEST_CASE("all-of needs every term, any-of one") {
  const std::map<uint64_t, Phase> jobs = {
      {1, Phase::kCompleted}, {2, Phase::kRunning}, {3, Phase::kFailed}};
  CHECK(Evaluate("afterok:1,afterany:2", jobs).state == State::kWaiting);
  CHECK(Evaluate("afterok:1,afterok:3", jobs).state == State::kNever);
  CHECK(Evaluate("afterok:3?afterok:1", jobs).state == State::kSatisfied);
  CHECK(Evaluate("afterok:3?afterany:2", jobs).state == State::kWaiting);
  CHECK(Evaluate("afterok:3?afternotok:1", jobs).state == State::kNever);
}

TEST_CASE("singleton waits while an earlier job of the name is active") {
  CHECK(Evaluate("singleton", {}, true).state == State::kWaiting);
  CHECK(Evaluate("singleton", {}, false).state == State::kSatisfied);
}

}  // namespace job_dependency_test
}  // namespace gantry
