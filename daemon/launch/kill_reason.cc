#include "daemon/launch/kill_reason.h"

namespace gantry {

v1::KillRanks::Reason KillReasonFor(JobEvent::Kind kind, bool requeue) {
  if (requeue) return v1::KillRanks::REASON_OTHER;
  switch (kind) {
    case JobEvent::Kind::kCancel:
      return v1::KillRanks::REASON_CANCELLED;
    case JobEvent::Kind::kTimeLimit:
      return v1::KillRanks::REASON_TIME_LIMIT;
    case JobEvent::Kind::kStart:
    case JobEvent::Kind::kRankExited:
    case JobEvent::Kind::kNodeLost:
    case JobEvent::Kind::kHang:
    case JobEvent::Kind::kRequeueRequest:
    // Not Slurm's two notices (cancel, time limit): none is written.
    case JobEvent::Kind::kDeadline:
    case JobEvent::Kind::kClientGone:
    case JobEvent::Kind::kPreflightFailed:
      return v1::KillRanks::REASON_OTHER;
  }
  return v1::KillRanks::REASON_OTHER;
}

}  // namespace gantry
