// Table test of the job state machine: every (state, event) pair that
// matters, with the next state, effects and reason it must produce.
#include <algorithm>

#include "daemon/scheduler/job_state_machine.h"

#include <catch2/catch.hpp>

namespace gantry {
namespace job_state_machine_test {

using K = JobEvent::Kind;
using S = JobStatus;
using E = JobEffect;

struct Row {
  const char* name;
  S from;
  JobEvent event;
  S to;
  std::vector<E> effects;
  const char* reason;
};

JobEvent Exit(int code, int signal, bool all) {
  JobEvent e{K::kRankExited};
  e.exit_code = code;
  e.signal = signal;
  e.all_ranks_exited = all;
  return e;
}

JobEvent OutOfMemory(JobEvent e) {
  e.out_of_memory = true;
  return e;
}

JobEvent Requeued(JobEvent e) {
  e.requeue = true;
  return e;
}

TEST_CASE("job state machine transitions", "[state]") {
  const std::vector<Row> rows = {
      {"start", S::kPending, {K::kStart}, S::kRunning, {E::kLaunchRanks}, ""},
      {"cancel pending",
       S::kPending,
       {K::kCancel},
       S::kCancelled,
       {E::kRecordEnd, E::kReleaseNodes},
       "Cancelled"},
      {"pending job misses its deadline",
       S::kPending,
       {K::kDeadline},
       S::kDeadline,
       {E::kRecordEnd, E::kReleaseNodes},
       "DeadLine"},
      {"running job reaches its deadline",
       S::kRunning,
       {K::kDeadline},
       S::kDeadline,
       {E::kKillRanks, E::kRecordAttemptEnd, E::kRecordEnd, E::kReleaseNodes},
       "DeadLine"},
      {"deadline after the end changes nothing",
       S::kCompleted,
       {K::kDeadline},
       S::kCompleted,
       {},
       ""},
      {"cancel running",
       S::kRunning,
       {K::kCancel},
       S::kCancelled,
       {E::kKillRanks, E::kRecordAttemptEnd, E::kRecordEnd, E::kReleaseNodes},
       "Cancelled"},
      {"one rank ok, others still running",
       S::kRunning,
       Exit(0, 0, false),
       S::kRunning,
       {},
       ""},
      {"last rank ok",
       S::kRunning,
       Exit(0, 0, true),
       S::kCompleted,
       {E::kKillRanks, E::kRecordAttemptEnd, E::kRecordEnd, E::kReleaseNodes},
       ""},
      {"rank fails first",
       S::kRunning,
       Exit(3, 0, false),
       S::kFailed,
       {E::kKillRanks, E::kRecordAttemptEnd, E::kRecordEnd, E::kReleaseNodes},
       "NonZeroExitCode"},
      {"last rank fails",
       S::kRunning,
       Exit(3, 0, true),
       S::kFailed,
       {E::kKillRanks, E::kRecordAttemptEnd, E::kRecordEnd, E::kReleaseNodes},
       "NonZeroExitCode"},
      {"rank killed by signal",
       S::kRunning,
       Exit(0, 9, false),
       S::kFailed,
       {E::kKillRanks, E::kRecordAttemptEnd, E::kRecordEnd, E::kReleaseNodes},
       "Signal"},
      {"rank killed by the OOM killer",
       S::kRunning,
       OutOfMemory(Exit(0, 9, false)),
       S::kOutOfMemory,
       {E::kKillRanks, E::kRecordAttemptEnd, E::kRecordEnd, E::kReleaseNodes},
       "OutOfMemory"},
      {"last rank OOM-killed (its child was, and it exited 137)",
       S::kRunning,
       OutOfMemory(Exit(137, 0, true)),
       S::kOutOfMemory,
       {E::kKillRanks, E::kRecordAttemptEnd, E::kRecordEnd, E::kReleaseNodes},
       "OutOfMemory"},
      {"OOM, requeued",
       S::kRunning,
       Requeued(OutOfMemory(Exit(0, 9, false))),
       S::kPending,
       {E::kKillRanks, E::kRecordAttemptEnd, E::kRequeue, E::kReleaseNodes},
       "OutOfMemory"},
      {"rank fails, requeued",
       S::kRunning,
       Requeued(Exit(3, 0, false)),
       S::kPending,
       {E::kKillRanks, E::kRecordAttemptEnd, E::kRequeue, E::kReleaseNodes},
       "NonZeroExitCode"},
      {"time limit",
       S::kRunning,
       {K::kTimeLimit},
       S::kTimeout,
       {E::kKillRanks, E::kRecordAttemptEnd, E::kRecordEnd, E::kReleaseNodes},
       "TimeLimit"},
      {"time limit is never requeued",
       S::kRunning,
       Requeued({K::kTimeLimit}),
       S::kTimeout,
       {E::kKillRanks, E::kRecordAttemptEnd, E::kRecordEnd, E::kReleaseNodes},
       "TimeLimit"},
      {"the client of a running allocation is gone (InactiveLimit)",
       S::kRunning,
       {K::kClientGone},
       S::kTimeout,
       {E::kKillRanks, E::kRecordAttemptEnd, E::kRecordEnd, E::kReleaseNodes},
       "InactiveLimit"},
      {"the client of a pending allocation is gone",
       S::kPending,
       {K::kClientGone},
       S::kCancelled,
       {E::kRecordEnd, E::kReleaseNodes},
       "InactiveLimit"},
      {"client gone after the allocation ended",
       S::kCompleted,
       {K::kClientGone},
       S::kCompleted,
       {},
       ""},
      {"node lost",
       S::kRunning,
       {K::kNodeLost},
       S::kNodeFail,
       {E::kKillRanks, E::kRecordAttemptEnd, E::kRecordEnd, E::kReleaseNodes},
       "NodeFail"},
      {"node lost, requeued",
       S::kRunning,
       Requeued({K::kNodeLost}),
       S::kPending,
       {E::kKillRanks, E::kRecordAttemptEnd, E::kRequeue, E::kReleaseNodes},
       "NodeFail"},
      {"hang",
       S::kRunning,
       {K::kHang},
       S::kFailed,
       {E::kKillRanks, E::kRecordAttemptEnd, E::kRecordEnd, E::kReleaseNodes},
       "Hang"},
      {"hang, requeued",
       S::kRunning,
       Requeued({K::kHang}),
       S::kPending,
       {E::kKillRanks, E::kRecordAttemptEnd, E::kRequeue, E::kReleaseNodes},
       "Hang"},
      {"late exit after cancel",
       S::kCancelled,
       Exit(143, 0, true),
       S::kCancelled,
       {},
       ""},
      {"late exit after failure",
       S::kFailed,
       Exit(0, 15, false),
       S::kFailed,
       {},
       ""},
      {"time limit after end",
       S::kCompleted,
       {K::kTimeLimit},
       S::kCompleted,
       {},
       ""},
      {"node lost while pending",
       S::kPending,
       {K::kNodeLost},
       S::kPending,
       {},
       ""},
      {"hang while pending", S::kPending, {K::kHang}, S::kPending, {}, ""},
      {"node lost after end", S::kTimeout, {K::kNodeLost}, S::kTimeout, {}, ""},
      {"requeue of a running job (scontrol requeue)",
       S::kRunning,
       {K::kRequeueRequest},
       S::kPending,
       {E::kKillRanks, E::kRecordAttemptEnd, E::kRequeue, E::kReleaseNodes},
       "Requeued"},
      {"requeue of a finished job",
       S::kFailed,
       {K::kRequeueRequest},
       S::kPending,
       {E::kRequeue},
       "Requeued"},
      {"requeue of a completed job",
       S::kCompleted,
       {K::kRequeueRequest},
       S::kPending,
       {E::kRequeue},
       "Requeued"},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      absl::StatusOr<JobTransition> t = ApplyJobEvent(row.from, row.event);
      REQUIRE(t.ok());
      CHECK(t->next == row.to);
      CHECK(t->effects == row.effects);
      CHECK(t->reason == row.reason);
    }
  }
}

// The controller carries out these effects and nothing else, so every way
// out of RUNNING must say to stop what runs, close the attempt and free
// the nodes.
TEST_CASE("every exit from RUNNING kills, closes the attempt and releases",
          "[state]") {
  const std::vector<JobEvent> events = {Exit(0, 0, true),
                                        Exit(3, 0, true),
                                        Exit(3, 0, false),
                                        Exit(0, 9, false),
                                        {K::kCancel},
                                        {K::kTimeLimit},
                                        {K::kClientGone},
                                        {K::kNodeLost},
                                        {K::kHang},
                                        Requeued({K::kHang}),
                                        Requeued(Exit(3, 0, true)),
                                        OutOfMemory(Exit(137, 0, true)),
                                        {K::kRequeueRequest}};
  for (const JobEvent& event : events) {
    absl::StatusOr<JobTransition> t = ApplyJobEvent(S::kRunning, event);
    REQUIRE(t.ok());
    REQUIRE(t->next != S::kRunning);
    const std::vector<E>& effects = t->effects;
    CHECK(effects.front() == E::kKillRanks);
    CHECK(std::count(effects.begin(), effects.end(), E::kRecordAttemptEnd) ==
          1);
    CHECK(effects.back() == E::kReleaseNodes);
  }
}

TEST_CASE("job state machine refuses events that make no sense", "[state]") {
  struct Bad {
    S from;
    JobEvent event;
    const char* message_part;
  };
  const std::vector<Bad> rows = {
      {S::kRunning, {K::kStart}, "cannot start a job that is RUNNING"},
      {S::kCompleted, {K::kStart}, "cannot start a job that is COMPLETED"},
      {S::kCompleted, {K::kCancel}, "already finished (COMPLETED)"},
      {S::kCancelled, {K::kCancel}, "already finished (CANCELLED)"},
      {S::kNodeFail, {K::kCancel}, "already finished (NODE_FAIL)"},
      {S::kOutOfMemory, {K::kCancel}, "already finished (OUT_OF_MEMORY)"},
      {S::kDeadline, {K::kCancel}, "already finished (DEADLINE)"},
      {S::kPending, Exit(0, 0, true), "has not started"},
      {S::kPending, {K::kRequeueRequest}, "job is pending execution"},
  };
  for (const Bad& row : rows) {
    absl::StatusOr<JobTransition> t = ApplyJobEvent(row.from, row.event);
    REQUIRE_FALSE(t.ok());
    CHECK(t.status().code() == absl::StatusCode::kFailedPrecondition);
    CHECK_THAT(std::string(t.status().message()),
               Catch::Contains(row.message_part));
  }
}

TEST_CASE("terminal states", "[state]") {
  CHECK_FALSE(IsTerminal(S::kPending));
  CHECK_FALSE(IsTerminal(S::kRunning));
  for (S s : {S::kCompleted, S::kFailed, S::kCancelled, S::kTimeout,
              S::kNodeFail, S::kOutOfMemory, S::kDeadline}) {
    CHECK(IsTerminal(s));
  }
  CHECK(std::string(JobStatusName(S::kNodeFail)) == "NODE_FAIL");
  CHECK(std::string(JobStatusName(S::kOutOfMemory)) == "OUT_OF_MEMORY");
  CHECK(std::string(JobStatusName(S::kDeadline)) == "DEADLINE");
}

}  // namespace job_state_machine_test
}  // namespace gantry
