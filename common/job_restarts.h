// How many times a job was restarted, with one definition for every place
// that shows it: SLURM_RESTART_COUNT and GANTRY_RESTART_COUNT in its
// ranks, Restarts= in `scontrol show job`, and sacct's Restarts field.
//
// Every attempt before the current (or last) one counts once, whatever
// ended it: a failure, a requeue, an elastic resize, a straggler swap. An
// attempt that a pre-flight check ended does not: its ranks never started,
// so the job never saw it.
#pragma once

#include <algorithm>
#include <cstdint>

#include "gantry/v1/types.pb.h"

namespace gantry {

inline uint32_t JobRestartCount(const v1::JobRecord& job) {
  const uint32_t earlier = job.attempt() > 0 ? job.attempt() - 1 : 0;
  uint32_t unseen = 0;
  for (const v1::AttemptRecord& attempt : job.attempts()) {
    if (attempt.attempt() < job.attempt() &&
        attempt.end_reason() == "Preflight") {
      ++unseen;
    }
  }
  return earlier - std::min(earlier, unseen);
}

}  // namespace gantry
