#include "daemon/controller/core/job_state_proto.h"

namespace gantry {

v1::JobState ToProto(JobStatus status) {
  switch (status) {
    case JobStatus::kPending:
      return v1::PENDING;
    case JobStatus::kRunning:
      return v1::RUNNING;
    case JobStatus::kCompleted:
      return v1::COMPLETED;
    case JobStatus::kFailed:
      return v1::FAILED;
    case JobStatus::kCancelled:
      return v1::CANCELLED;
    case JobStatus::kTimeout:
      return v1::TIMEOUT;
    case JobStatus::kNodeFail:
      return v1::NODE_FAIL;
    case JobStatus::kOutOfMemory:
      return v1::OUT_OF_MEMORY;
    case JobStatus::kDeadline:
      return v1::DEADLINE;
  }
  return v1::JOB_STATE_UNSPECIFIED;
}

JobStatus FromProto(v1::JobState state) {
  switch (state) {
    case v1::RUNNING:
      return JobStatus::kRunning;
    case v1::COMPLETED:
      return JobStatus::kCompleted;
    case v1::FAILED:
      return JobStatus::kFailed;
    case v1::CANCELLED:
      return JobStatus::kCancelled;
    case v1::TIMEOUT:
      return JobStatus::kTimeout;
    case v1::NODE_FAIL:
      return JobStatus::kNodeFail;
    case v1::OUT_OF_MEMORY:
      return JobStatus::kOutOfMemory;
    case v1::DEADLINE:
      return JobStatus::kDeadline;
    default:
      return JobStatus::kPending;
  }
}

}  // namespace gantry
