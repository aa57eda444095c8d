#include "daemon/controller/core/allocation_liveness.h"

namespace gantry {

AllocationLiveness::AllocationLiveness(int64_t limit_ms)
    : limit_ms_(limit_ms) {}

void AllocationLiveness::Heard(uint64_t job_id, int64_t now_ms) {
  if (!enabled()) return;
  SetDeadline(job_id, now_ms + limit_ms_);
}

void AllocationLiveness::Track(uint64_t job_id, int64_t deadline_ms) {
  if (!enabled()) return;
  SetDeadline(job_id, deadline_ms);
}

void AllocationLiveness::SetDeadline(uint64_t job_id, int64_t deadline_ms) {
  auto [it, inserted] = deadline_.try_emplace(job_id, deadline_ms);
  if (!inserted) {
    // A keepalive that was delayed on its way must not pull a later
    // deadline (a restart's grace, a newer keepalive) back.
    if (deadline_ms <= it->second) return;
    by_deadline_.erase({it->second, job_id});
    it->second = deadline_ms;
  }
  by_deadline_.emplace(deadline_ms, job_id);
}

void AllocationLiveness::Forget(uint64_t job_id) {
  auto it = deadline_.find(job_id);
  if (it == deadline_.end()) return;
  by_deadline_.erase({it->second, job_id});
  deadline_.erase(it);
}

void AllocationLiveness::Postpone(int64_t delta_ms) {
  if (delta_ms <= 0 || deadline_.empty()) return;
  std::set<std::pair<int64_t, uint64_t>> moved;
  for (auto& [job_id, deadline_ms] : deadline_) {
    deadline_ms += delta_ms;
    moved.emplace(deadline_ms, job_id);
  }
  by_deadline_ = std::move(moved);
}

std::vector<uint64_t> AllocationLiveness::TakeExpired(int64_t now_ms) {
  std::vector<uint64_t> expired;
  while (!by_deadline_.empty() && by_deadline_.begin()->first < now_ms) {
    const uint64_t job_id = by_deadline_.begin()->second;
    by_deadline_.erase(by_deadline_.begin());
    deadline_.erase(job_id);
    expired.push_back(job_id);
  }
  return expired;
}

}  // namespace gantry
