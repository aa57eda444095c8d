#include "daemon/scheduler/job_state_machine.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace gantry {

bool IsTerminal(JobStatus status) {
  return status != JobStatus::kPending && status != JobStatus::kRunning;
}

const char* JobStatusName(JobStatus status) {
  switch (status) {
    case JobStatus::kPending:
      return "PENDING";
    case JobStatus::kRunning:
      return "RUNNING";
    case JobStatus::kCompleted:
      return "COMPLETED";
    case JobStatus::kFailed:
      return "FAILED";
    case JobStatus::kCancelled:
      return "CANCELLED";
    case JobStatus::kTimeout:
      return "TIMEOUT";
    case JobStatus::kNodeFail:
      return "NODE_FAIL";
    case JobStatus::kOutOfMemory:
      return "OUT_OF_MEMORY";
  }
  return "UNKNOWN";
}

namespace {

JobTransition Stay(JobStatus current) { return {current, {}, ""}; }

// Ends the job, or (when requeued) only the attempt. Leaving RUNNING always
// closes the attempt.
JobTransition End(JobStatus from, JobStatus next, std::string reason, bool kill,
                  bool requeue = false) {
  JobTransition t{requeue ? JobStatus::kPending : next, {}, std::move(reason)};
  if (kill) t.effects.push_back(JobEffect::kKillRanks);
  if (from == JobStatus::kRunning) {
    t.effects.push_back(JobEffect::kRecordAttemptEnd);
  }
  t.effects.push_back(requeue ? JobEffect::kRequeue : JobEffect::kRecordEnd);
  return t;
}

absl::StatusOr<JobTransition> OnRankExited(JobStatus current,
                                           const JobEvent& event) {
  if (current == JobStatus::kPending) {
    return absl::FailedPreconditionError(
        "a rank exit was reported for a job that has not started");
  }
  if (IsTerminal(current)) return Stay(current);
  const bool kill = !event.all_ranks_exited;
  if (event.out_of_memory) {
    return End(current, JobStatus::kOutOfMemory, "OutOfMemory", kill,
               event.requeue);
  }
  if (event.signal != 0) {
    return End(current, JobStatus::kFailed, "Signal", kill, event.requeue);
  }
  if (event.exit_code != 0) {
    return End(current, JobStatus::kFailed, "NonZeroExitCode", kill,
               event.requeue);
  }
  if (event.all_ranks_exited) {
    return End(current, JobStatus::kCompleted, "", false);
  }
  return Stay(current);
}

}  // namespace

absl::StatusOr<JobTransition> ApplyJobEvent(JobStatus current,
                                            const JobEvent& event) {
  switch (event.kind) {
    case JobEvent::Kind::kStart:
      if (current != JobStatus::kPending) {
        return absl::FailedPreconditionError(absl::StrCat(
            "cannot start a job that is ", JobStatusName(current)));
      }
      return JobTransition{JobStatus::kRunning, {JobEffect::kLaunchRanks}, ""};
    case JobEvent::Kind::kRankExited:
      return OnRankExited(current, event);
    case JobEvent::Kind::kCancel:
      if (current == JobStatus::kPending) {
        return End(current, JobStatus::kCancelled, "Cancelled", false);
      }
      if (current == JobStatus::kRunning) {
        return End(current, JobStatus::kCancelled, "Cancelled", true);
      }
      return absl::FailedPreconditionError(absl::StrCat(
          "job has already finished (", JobStatusName(current), ")"));
    case JobEvent::Kind::kTimeLimit:
      if (current != JobStatus::kRunning) return Stay(current);
      return End(current, JobStatus::kTimeout, "TimeLimit", true);
    case JobEvent::Kind::kNodeLost:
      if (current != JobStatus::kRunning) return Stay(current);
      return End(current, JobStatus::kNodeFail, "NodeFail", true,
                 event.requeue);
    case JobEvent::Kind::kHang:
      if (current != JobStatus::kRunning) return Stay(current);
      return End(current, JobStatus::kFailed, "Hang", true, event.requeue);
  }
  return absl::InternalError("unknown job event");
}

}  // namespace gantry
