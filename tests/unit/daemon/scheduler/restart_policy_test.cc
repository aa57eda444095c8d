// Table test of the restart policy.
#include "daemon/scheduler/restart_policy.h"

#include <catch2/catch.hpp>

namespace gantry {
namespace restart_policy_test {

// `requested`: the job set --max-restarts itself.
RestartInput Input(FailureKind kind, uint32_t attempts, uint32_t max = 3,
                   bool requested = true) {
  RestartInput in;
  in.kind = kind;
  in.attempts_started = attempts;
  in.max_restarts = max;
  in.restarts_requested = requested;
  in.backoff_base_ms = 1000;
  return in;
}

TEST_CASE("by default only faults that are not the job's restart it",
          "[restart]") {
  // Slurm's rule: a script that fails on a healthy node is not re-run
  // unless the job asks (--max-restarts N); node faults, hangs and our own
  // crashes are not the job's doing.
  struct Case {
    FailureKind kind;
    bool requested;
    bool restart;
  };
  const Case cases[] = {
      {FailureKind::kApplication, false, false},
      {FailureKind::kOutOfMemory, false, false},
      {FailureKind::kApplication, true, true},
      {FailureKind::kOutOfMemory, true, true},
      {FailureKind::kNodeFault, false, true},
      {FailureKind::kHang, false, true},
      {FailureKind::kOwnCrash, false, true},
      {FailureKind::kTimeLimit, false, false},
      {FailureKind::kCancelled, true, false},
  };
  for (const Case& c : cases) {
    INFO("kind " << static_cast<int>(c.kind) << " requested " << c.requested);
    RestartInput input = Input(c.kind, 1, 3, c.requested);
    input.exit_code = 3;
    const RestartDecision d = DecideRestart(input);
    CHECK(d.restart == c.restart);
    if (IsApplicationFailure(c.kind) && !c.requested) {
      CHECK_THAT(d.final_detail, Catch::Contains("on a healthy node: not "
                                                 "restarted") &&
                                     Catch::Contains("--max-restarts N"));
    }
  }
  // --max-restarts=0 (or --no-requeue): the budget says why.
  CHECK_THAT(
      DecideRestart(Input(FailureKind::kApplication, 1, 0, false)).final_detail,
      Catch::Contains("restart budget of 0 exhausted"));
  RestartInput oom = Input(FailureKind::kOutOfMemory, 1, 3, false);
  CHECK_THAT(DecideRestart(oom).final_detail,
             Catch::StartsWith("ran out of memory"));
  RestartInput app = Input(FailureKind::kApplication, 1, 3, false);
  app.exit_code = 3;
  CHECK_THAT(DecideRestart(app).final_detail,
             Catch::StartsWith("failed with exit code 3"));
}

TEST_CASE("node faults restart at once, then with backoff", "[restart]") {
  RestartDecision d = DecideRestart(Input(FailureKind::kNodeFault, 1));
  CHECK(d.restart);
  CHECK(d.backoff_ms == 0);
  d = DecideRestart(Input(FailureKind::kNodeFault, 2));
  CHECK(d.restart);
  CHECK(d.backoff_ms == 1000);
  d = DecideRestart(Input(FailureKind::kNodeFault, 3));
  CHECK(d.backoff_ms == 2000);
  CHECK(DecideRestart(Input(FailureKind::kHang, 1)).restart);
}

TEST_CASE("the restart budget ends the job", "[restart]") {
  RestartDecision d = DecideRestart(Input(FailureKind::kNodeFault, 4, 3));
  CHECK_FALSE(d.restart);
  CHECK_THAT(d.final_detail, Catch::Contains("restart budget of 3 exhausted"));
  CHECK_FALSE(DecideRestart(Input(FailureKind::kNodeFault, 1, 0)).restart);
}

TEST_CASE("our own crash restarts at once and spends nothing", "[restart]") {
  // Even with the budget spent (or none given), losing an attempt to a
  // controller or agent crash is not the job's failure.
  for (uint32_t attempts : {1u, 4u, 40u}) {
    RestartDecision d =
        DecideRestart(Input(FailureKind::kOwnCrash, attempts, 0));
    CHECK(d.restart);
    CHECK(d.backoff_ms == 0);
    CHECK(d.final_detail.empty());
  }
}

TEST_CASE("time limits and cancels are final", "[restart]") {
  CHECK_FALSE(DecideRestart(Input(FailureKind::kTimeLimit, 1)).restart);
  CHECK_FALSE(DecideRestart(Input(FailureKind::kCancelled, 1)).restart);
}

TEST_CASE("an application failure that asked for restarts gets one retry",
          "[restart]") {
  RestartInput first = Input(FailureKind::kApplication, 1);
  first.exit_code = 2;
  RestartDecision d = DecideRestart(first);
  CHECK(d.restart);
  CHECK(d.backoff_ms == 1000);
  CHECK(d.repeated_app_failures == 1);

  SECTION("the same failure again is an application bug") {
    RestartInput second = Input(FailureKind::kApplication, 2);
    second.exit_code = 2;
    second.previous_exit_code = 2;
    second.repeated_app_failures = d.repeated_app_failures;
    RestartDecision again = DecideRestart(second);
    CHECK_FALSE(again.restart);
    CHECK_THAT(again.final_detail, Catch::Contains("exit code 2 on 2"));
  }
  SECTION("a different failure counts afresh") {
    RestartInput second = Input(FailureKind::kApplication, 2);
    second.signal = 9;
    second.previous_exit_code = 2;
    second.repeated_app_failures = d.repeated_app_failures;
    RestartDecision other = DecideRestart(second);
    CHECK(other.restart);
    CHECK(other.repeated_app_failures == 1);
    CHECK(other.backoff_ms == 2000);
  }
}

TEST_CASE("an out-of-memory kill is an application failure", "[restart]") {
  CHECK(IsApplicationFailure(FailureKind::kOutOfMemory));
  CHECK_FALSE(IsApplicationFailure(FailureKind::kNodeFault));
  RestartInput first = Input(FailureKind::kOutOfMemory, 1);
  first.signal = 9;
  RestartDecision d = DecideRestart(first);
  CHECK(d.restart);
  CHECK(d.backoff_ms == 1000);  // backoff from the first restart, as apps
  CHECK(d.repeated_app_failures == 1);

  RestartInput second = Input(FailureKind::kOutOfMemory, 2);
  second.signal = 9;
  second.previous_signal = 9;
  second.repeated_app_failures = d.repeated_app_failures;
  RestartDecision again = DecideRestart(second);
  CHECK_FALSE(again.restart);
  CHECK_THAT(again.final_detail,
             Catch::Contains("ran out of memory on 2 consecutive attempts") &&
                 Catch::Contains("larger --mem"));
}

}  // namespace restart_policy_test
}  // namespace gantry
