#include "daemon/launch/kill_reason.h"

#include <algorithm>

#include <catch2/catch.hpp>

namespace gantry {
namespace kill_reason_test {

using Kind = JobEvent::Kind;

TEST_CASE("a cancel and a time limit are the kills that say why",
          "[kill_reason]") {
  CHECK(KillReasonFor(Kind::kCancel, false) == v1::KillRanks::REASON_CANCELLED);
  CHECK(KillReasonFor(Kind::kTimeLimit, false) ==
        v1::KillRanks::REASON_TIME_LIMIT);
}

TEST_CASE("requeues, node failures, hangs and failed ranks are other kills",
          "[kill_reason]") {
  for (Kind kind : {Kind::kStart, Kind::kRankExited, Kind::kNodeLost,
                    Kind::kHang, Kind::kRequeueRequest}) {
    for (bool requeue : {false, true}) {
      CHECK(KillReasonFor(kind, requeue) == v1::KillRanks::REASON_OTHER);
    }
  }
  // An attempt that goes back to the queue is never reported as cancelled
  // or timed out.
  CHECK(KillReasonFor(Kind::kCancel, true) == v1::KillRanks::REASON_OTHER);
  CHECK(KillReasonFor(Kind::kTimeLimit, true) == v1::KillRanks::REASON_OTHER);
}

TEST_CASE("every event that stops a running job's ranks maps to a reason",
          "[kill_reason]") {
  // The transitions that kill, from the state machine itself: only the two
  // Slurm announces carry a reason.
  struct Row {
    JobEvent event;
    v1::KillRanks::Reason reason;
  };
  JobEvent failed{Kind::kRankExited};
  failed.exit_code = 1;
  JobEvent node_lost_requeued{Kind::kNodeLost};
  node_lost_requeued.requeue = true;
  const Row rows[] = {
      {JobEvent{Kind::kCancel}, v1::KillRanks::REASON_CANCELLED},
      {JobEvent{Kind::kTimeLimit}, v1::KillRanks::REASON_TIME_LIMIT},
      {JobEvent{Kind::kNodeLost}, v1::KillRanks::REASON_OTHER},
      {node_lost_requeued, v1::KillRanks::REASON_OTHER},
      {JobEvent{Kind::kHang}, v1::KillRanks::REASON_OTHER},
      {JobEvent{Kind::kRequeueRequest}, v1::KillRanks::REASON_OTHER},
      {failed, v1::KillRanks::REASON_OTHER},
  };
  for (const Row& row : rows) {
    absl::StatusOr<JobTransition> transition =
        ApplyJobEvent(JobStatus::kRunning, row.event);
    REQUIRE(transition.ok());
    REQUIRE(std::count(transition->effects.begin(), transition->effects.end(),
                       JobEffect::kKillRanks) == 1);
    CHECK(KillReasonFor(row.event.kind, row.event.requeue) == row.reason);
  }
}

}  // namespace kill_reason_test
}  // namespace gantry
