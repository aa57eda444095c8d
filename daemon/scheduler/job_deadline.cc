#include "daemon/scheduler/job_deadline.h"

#include "absl/strings/str_cat.h"

namespace gantry {

absl::Status CheckDeadline(int64_t now_ms, int64_t deadline_ms,
                           int64_t begin_ms, uint64_t time_limit_ms) {
  if (deadline_ms == 0) return absl::OkStatus();
  if (deadline_ms < 0 || deadline_ms <= now_ms) {
    return absl::InvalidArgumentError("--deadline is in the past");
  }
  if (begin_ms > deadline_ms) {
    return absl::InvalidArgumentError(
        "incompatible begin and deadline time specification: --begin is "
        "after --deadline");
  }
  const int64_t earliest = begin_ms > now_ms ? begin_ms : now_ms;
  if (time_limit_ms > 0 &&
      earliest + static_cast<int64_t>(time_limit_ms) > deadline_ms) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the job's time limit (", time_limit_ms / 1000,
        " s) cannot run out before its --deadline, ",
        (deadline_ms - earliest) / 1000, " s after it could start"));
  }
  return absl::OkStatus();
}

bool MissesDeadline(int64_t now_ms, int64_t deadline_ms, uint64_t time_limit_ms,
                    bool running) {
  if (deadline_ms <= 0) return false;
  if (now_ms >= deadline_ms) return true;
  if (running || time_limit_ms == 0) return false;
  // Both are bounded (a year of time limit, dates before year 10000), so
  // the sum cannot overflow.
  return now_ms + static_cast<int64_t>(time_limit_ms) > deadline_ms;
}

}  // namespace gantry
