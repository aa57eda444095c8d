// Simulated ranks (gantry-fleet): plans from the job's
// environment, the passage of time, and kills, with the clock passed in.

#include "agent/simulated/simulated_ranks.h"

#include <csignal>

#include <catch2/catch.hpp>

namespace gantry::agent {
namespace simulated_ranks_test {

v1::LaunchRanks Launch(uint64_t job, uint32_t attempt,
                       std::initializer_list<uint32_t> ranks,
                       std::map<std::string, std::string> job_env = {}) {
  v1::LaunchRanks launch;
  launch.set_job_id(job);
  launch.set_attempt(attempt);
  for (uint32_t rank : ranks) {
    v1::RankLaunch* r = launch.add_ranks();
    r->set_rank(rank);
    (*r->mutable_environment())["GANTRY_NTASKS"] = "4";
  }
  for (const auto& [key, value] : job_env) {
    (*launch.mutable_job_environment())[key] = value;
  }
  return launch;
}

constexpr SimulatedRankPlan kDefaults{.duration_ms = 10000, .exit_code = 0};

TEST_CASE("durations parse as seconds, inf, or fail clearly") {
  CHECK(*ParseSimulatedDurationMs("0") == 0);
  CHECK(*ParseSimulatedDurationMs("2.5") == 2500);
  CHECK(*ParseSimulatedDurationMs(" 1 ") == 1000);
  CHECK(*ParseSimulatedDurationMs("inf") == kRunsForever);
  CHECK(*ParseSimulatedDurationMs("Infinity") == kRunsForever);
  CHECK(*ParseSimulatedDurationMs("1e30") == kRunsForever);
  for (const char* bad : {"", "-1", "soon", "nan", "1s"}) {
    INFO(bad);
    absl::StatusOr<int64_t> parsed = ParseSimulatedDurationMs(bad);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.status().code() == absl::StatusCode::kInvalidArgument);
  }
  CHECK(SimulatedDurationMs(0.001) == 1);
  CHECK(SimulatedDurationMs(1e20) == kRunsForever);
}

TEST_CASE("a rank's plan: its own variables over the job's over defaults") {
  google::protobuf::Map<std::string, std::string> job, rank;
  CHECK(PlanSimulatedRank(job, rank, kDefaults)->duration_ms == 10000);
  CHECK(PlanSimulatedRank(job, rank, kDefaults)->exit_code == 0);
  job[kSimulatedSecondsVariable] = "3";
  job[kSimulatedExitCodeVariable] = "7";
  CHECK(PlanSimulatedRank(job, rank, kDefaults)->duration_ms == 3000);
  CHECK(PlanSimulatedRank(job, rank, kDefaults)->exit_code == 7);
  rank[kSimulatedExitCodeVariable] = "0";
  CHECK(PlanSimulatedRank(job, rank, kDefaults)->exit_code == 0);

  SECTION("bad values name the variable") {
    job[kSimulatedExitCodeVariable] = "300";
    rank.clear();
    absl::StatusOr<SimulatedRankPlan> plan =
        PlanSimulatedRank(job, rank, kDefaults);
    REQUIRE_FALSE(plan.ok());
    CHECK(plan.status().message().find(kSimulatedExitCodeVariable) !=
          std::string::npos);
    job[kSimulatedExitCodeVariable] = "1";
    job[kSimulatedSecondsVariable] = "-2";
    plan = PlanSimulatedRank(job, rank, kDefaults);
    REQUIRE_FALSE(plan.ok());
    CHECK(plan.status().message().find(kSimulatedSecondsVariable) !=
          std::string::npos);
  }
}

TEST_CASE("signals end a simulated rank as they would end a process") {
  CHECK(SignalEndsProcess(SIGTERM));
  CHECK(SignalEndsProcess(SIGKILL));
  CHECK(SignalEndsProcess(SIGINT));
  CHECK(SignalEndsProcess(SIGUSR1));
  CHECK(SignalEndsProcess(SIGRTMIN));
  CHECK_FALSE(SignalEndsProcess(0));
  CHECK_FALSE(SignalEndsProcess(SIGCONT));
  CHECK_FALSE(SignalEndsProcess(SIGCHLD));
  CHECK_FALSE(SignalEndsProcess(SIGWINCH));
  CHECK_FALSE(SignalEndsProcess(SIGSTOP));
  CHECK_FALSE(SignalEndsProcess(SIGTSTP));
  CHECK_FALSE(SignalEndsProcess(-3));
  CHECK_FALSE(SignalEndsProcess(1000));
}

TEST_CASE("ranks run for their planned time and exit with their code") {
  SimulatedRanks ranks(kDefaults);
  auto result = ranks.Launch(Launch(5, 1, {0, 1},
                                    {{kSimulatedSecondsVariable, "2"},
                                     {kSimulatedExitCodeVariable, "3"}}),
                             1000);
  REQUIRE(result.failed.empty());
  REQUIRE(result.started.size() == 2);
  CHECK(result.started[1].job_id() == 5);
  CHECK(result.started[1].attempt() == 1);
  CHECK(result.started[1].rank() == 1);
  CHECK(ranks.size() == 2);
  CHECK(ranks.NextDueMs() == 3000);
  CHECK(ranks.TakeDue(2999).empty());
  std::vector<SimulatedRankEnd> ended = ranks.TakeDue(3000);
  REQUIRE(ended.size() == 2);
  for (const SimulatedRankEnd& end : ended) {
    CHECK(end.outcome.exit_code == 3);
    CHECK(end.outcome.signal == 0);
    CHECK_FALSE(end.outcome.launch_failed);
  }
  CHECK(ranks.size() == 0);
  CHECK(ranks.NextDueMs() == kRunsForever);
}

TEST_CASE("the agent's defaults apply when the job sets nothing") {
  SimulatedRanks ranks({.duration_ms = 500, .exit_code = 9});
  ranks.Launch(Launch(1, 1, {0}), 0);
  CHECK(ranks.NextDueMs() == 500);
  std::vector<SimulatedRankEnd> ended = ranks.TakeDue(500);
  REQUIRE(ended.size() == 1);
  CHECK(ended[0].outcome.exit_code == 9);
}

TEST_CASE("a repeated launch leaves running ranks alone") {
  SimulatedRanks ranks(kDefaults);
  CHECK(ranks.Launch(Launch(1, 1, {0, 1}), 0).started.size() == 2);
  auto again = ranks.Launch(Launch(1, 1, {1, 2}), 500);
  REQUIRE(again.started.size() == 1);
  CHECK(again.started[0].rank() == 2);
  CHECK(ranks.size() == 3);
  CHECK(ranks.TakeDue(10000).size() == 2);  // ranks 0 and 1, from t=0
}

TEST_CASE("a bad plan fails every rank of the launch and starts none") {
  SimulatedRanks ranks(kDefaults);
  auto result = ranks.Launch(
      Launch(2, 1, {0, 1, 2}, {{kSimulatedSecondsVariable, "later"}}), 0);
  CHECK(result.started.empty());
  REQUIRE(result.failed.size() == 3);
  for (const SimulatedRankEnd& end : result.failed) {
    CHECK(end.outcome.launch_failed);
    CHECK(end.outcome.message.find(kSimulatedSecondsVariable) !=
          std::string::npos);
  }
  CHECK(ranks.size() == 0);
}

TEST_CASE("a kill ends the attempt's ranks with the signal") {
  SimulatedRanks ranks(kDefaults);
  ranks.Launch(Launch(7, 1, {0, 1}, {{kSimulatedSecondsVariable, "inf"}}), 0);
  ranks.Launch(Launch(7, 2, {0}), 0);
  ranks.Launch(Launch(8, 1, {0}), 0);
  CHECK(ranks.NextDueMs() == 10000);

  SECTION("one attempt") {
    std::vector<SimulatedRankEnd> ended = ranks.Kill(7, 1, 15, 10, true, 50);
    REQUIRE(ended.size() == 2);
    CHECK(ended[0].outcome.signal == 15);
    CHECK(ended[0].rank.attempt() == 1);
    CHECK(ranks.size() == 2);
  }
  SECTION("attempt 0 is every attempt; signal 0 is SIGTERM") {
    std::vector<SimulatedRankEnd> ended = ranks.Kill(7, 0, 0, 10, true, 50);
    REQUIRE(ended.size() == 3);
    CHECK(ended[2].outcome.signal == SIGTERM);
    REQUIRE(ranks.Running().size() == 1);
    CHECK(ranks.Running()[0].job_id() == 8);
  }
  SECTION("a signal that does not end a process: SIGKILL after the grace") {
    CHECK(ranks.Kill(7, 1, SIGCONT, 2, true, 1000).empty());
    CHECK(ranks.NextDueMs() == 3000);
    std::vector<SimulatedRankEnd> ended = ranks.TakeDue(3000);
    REQUIRE(ended.size() == 2);
    CHECK(ended[0].outcome.signal == SIGKILL);
  }
  SECTION("scancel --signal: the signal alone, nothing follows") {
    CHECK(ranks.Kill(7, 1, SIGCONT, 2, false, 1000).empty());
    CHECK(ranks.TakeDue(5000).empty());
    CHECK(ranks.size() == 4);
  }
  SECTION("a rank that ends before the grace is up exits on its own") {
    CHECK(ranks.Kill(8, 1, SIGWINCH, 60, true, 0).empty());
    std::vector<SimulatedRankEnd> ended = ranks.TakeDue(10000);
    REQUIRE(ended.size() == 2);  // job 7 attempt 2 and job 8, at 10 s
    for (const SimulatedRankEnd& end : ended) {
      CHECK(end.outcome.signal == 0);
      CHECK(end.outcome.exit_code == 0);
    }
  }
}

}  // namespace simulated_ranks_test
}  // namespace gantry::agent
