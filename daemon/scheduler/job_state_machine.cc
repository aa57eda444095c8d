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
    case JobStatus::kDeadline:
      return "DEADLINE";
  }
  return "UNKNOWN";
}

namespace {

JobTransition Stay(JobStatus current) { return {current, {}, ""}; }

// Ends the job, or (when requeued) only the attempt. Leaving RUNNING always
// stops what still runs of the attempt and closes it.
JobTransition End(JobStatus from, JobStatus next, std::string reason,
                  bool requeue = false) {
  JobTransition t{requeue ? JobStatus::kPending : next, {}, std::move(reason)};
  if (from == JobStatus::kRunning) {
    t.effects.push_back(JobEffect::kKillRanks);
    t.effects.push_back(JobEffect::kRecordAttemptEnd);
  }
  t.effects.push_back(requeue ? JobEffect::kRequeue : JobEffect::kRecordEnd);
  t.effects.push_back(JobEffect::kReleaseNodes);
  return t;
}

absl::StatusOr<JobTransition> OnRankExited(JobStatus current,
                                           const JobEvent& event) {
  if (current == JobStatus::kPending) {
    return absl::FailedPreconditionError(
        "a rank exit was reported for a job that has not started");
  }
  if (IsTerminal(current)) return Stay(current);
  if (event.out_of_memory) {
    return End(current, JobStatus::kOutOfMemory, "OutOfMemory", event.requeue);
  }
  if (event.signal != 0) {
    return End(current, JobStatus::kFailed, "Signal", event.requeue);
  }
  if (event.exit_code != 0) {
    return End(current, JobStatus::kFailed, "NonZeroExitCode", event.requeue);
  }
  if (event.all_ranks_exited) {
    return End(current, JobStatus::kCompleted, "");
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
      if (!IsTerminal(current)) {
        return End(current, JobStatus::kCancelled, "Cancelled");
      }
      return absl::FailedPreconditionError(absl::StrCat(
          "job has already finished (", JobStatusName(current), ")"));
    case JobEvent::Kind::kTimeLimit:
      if (current != JobStatus::kRunning) return Stay(current);
      return End(current, JobStatus::kTimeout, "TimeLimit");
    case JobEvent::Kind::kDeadline:
      if (IsTerminal(current)) return Stay(current);
      return End(current, JobStatus::kDeadline, "DeadLine");
    case JobEvent::Kind::kClientGone:
      // Late (the client ended it, or scancel did, meanwhile): nothing.
      if (IsTerminal(current)) return Stay(current);
      return End(current,
                 current == JobStatus::kRunning ? JobStatus::kTimeout
                                                : JobStatus::kCancelled,
                 "InactiveLimit");
    case JobEvent::Kind::kNodeLost:
      if (current != JobStatus::kRunning) return Stay(current);
      return End(current, JobStatus::kNodeFail, "NodeFail", event.requeue);
    case JobEvent::Kind::kHang:
      if (current != JobStatus::kRunning) return Stay(current);
      return End(current, JobStatus::kFailed, "Hang", event.requeue);
    case JobEvent::Kind::kPreflightFailed:
      if (current != JobStatus::kRunning) return Stay(current);
      return End(current, JobStatus::kNodeFail, "Preflight", event.requeue);
    case JobEvent::Kind::kRequeueRequest:
      if (current == JobStatus::kPending) {
        return absl::FailedPreconditionError(
            "job is pending execution: only running or finished jobs can be "
            "requeued");
      }
      if (current == JobStatus::kRunning) {
        return End(current, JobStatus::kPending, "Requeued",
                   /*requeue=*/true);
      }
      // A finished job runs again; nothing of it is running to stop.
      return JobTransition{
          JobStatus::kPending, {JobEffect::kRequeue}, "Requeued"};
  }
  return absl::InternalError("unknown job event");
}

}  // namespace gantry
