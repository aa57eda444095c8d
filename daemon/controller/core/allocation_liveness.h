// Which interactive allocations (srun or salloc outside a job) still have
// a client: each is expected to be heard from (KeepAllocation) within the
// inactive limit, as Slurm's controller expects its srun/salloc to answer
// within InactiveLimit. An allocation not heard from by its deadline is
// handed back once by TakeExpired, for the controller to end.
//
// In memory only, on purpose: a keepalive is not worth a synced write.
// A restarted controller tracks every allocation it loads anew with a
// deadline a grace period away (Track), so none is ended because the
// controller, not its client, was away.
//
// Costs: Heard and Track are O(log n), TakeExpired O(log n) plus the
// allocations it returns, for n tracked allocations; nothing walks the
// jobs. Not thread-safe: the controller's loop thread owns it. Time comes
// in as arguments, so tests drive it without a clock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

namespace gantry {

class AllocationLiveness {
 public:
  // `limit_ms` <= 0: no limit; nothing is tracked and nothing expires.
  explicit AllocationLiveness(int64_t limit_ms);

  bool enabled() const { return limit_ms_ > 0; }
  int64_t limit_ms() const { return limit_ms_; }

  // The client was heard from at `now_ms`: its deadline is now_ms plus the
  // limit (never earlier than a deadline it already has). Starts tracking
  // an allocation not tracked yet.
  void Heard(uint64_t job_id, int64_t now_ms);
  // Tracks `job_id` with the deadline `deadline_ms` (after a controller
  // start: its clients may not have been able to reach it), or moves its
  // deadline there if that is later.
  void Track(uint64_t job_id, int64_t deadline_ms);
  // The allocation ended; not tracked any more.
  void Forget(uint64_t job_id);
  // Every deadline moves `delta_ms` later (the controller's loop was
  // stalled, so clients were not listened to).
  void Postpone(int64_t delta_ms);

  // The allocations whose deadline is before `now_ms`, earliest first; no
  // longer tracked.
  std::vector<uint64_t> TakeExpired(int64_t now_ms);

  bool tracked(uint64_t job_id) const { return deadline_.count(job_id) > 0; }
  size_t size() const { return deadline_.size(); }

 private:
  void SetDeadline(uint64_t job_id, int64_t deadline_ms);

  const int64_t limit_ms_;
  std::unordered_map<uint64_t, int64_t> deadline_;
  std::set<std::pair<int64_t, uint64_t>> by_deadline_;
};

}  // namespace gantry
