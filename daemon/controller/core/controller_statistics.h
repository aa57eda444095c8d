// The controller's counters since it started, for sdiag (SchedulerReport):
// jobs submitted, started and ended by outcome, and scheduling pass
// durations. Counted where the controller already reports its metrics, so
// they need no Prometheus registry (unit tests, --metrics-listen off).
//
// Thread-compatible: the controller's loop thread owns the one instance.
#pragma once

#include <algorithm>
#include <cstdint>

#include "daemon/scheduler/job_state_machine.h"

namespace gantry {

struct ControllerStatistics {
  uint64_t jobs_submitted = 0;
  uint64_t jobs_started = 0;
  uint64_t jobs_completed = 0;
  uint64_t jobs_failed = 0;  // failed, timed out, node fail, out of memory
  uint64_t jobs_cancelled = 0;
  uint64_t cycles = 0;
  uint64_t cycle_last_us = 0;
  uint64_t cycle_max_us = 0;
  uint64_t cycle_total_us = 0;
  int64_t last_cycle_ms = 0;

  void JobMoved(JobStatus from, JobStatus to) {
    if (from == to) return;
    switch (to) {
      case JobStatus::kRunning:
        ++jobs_started;
        break;
      case JobStatus::kCompleted:
        ++jobs_completed;
        break;
      case JobStatus::kCancelled:
        ++jobs_cancelled;
        break;
      case JobStatus::kFailed:
      case JobStatus::kTimeout:
      case JobStatus::kNodeFail:
      case JobStatus::kOutOfMemory:
      case JobStatus::kDeadline:
        ++jobs_failed;
        break;
      default:
        break;
    }
  }
  void SchedulingPass(int64_t duration_ns, int64_t now_ms) {
    const uint64_t us =
        static_cast<uint64_t>(std::max<int64_t>(0, duration_ns) / 1000);
    ++cycles;
    cycle_last_us = us;
    cycle_max_us = std::max(cycle_max_us, us);
    cycle_total_us += us;
    last_cycle_ms = now_ms;
  }
};

}  // namespace gantry
