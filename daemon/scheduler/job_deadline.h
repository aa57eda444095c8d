// --deadline (man sbatch): when a job misses its deadline. A pending job
// is removed as soon as it can no longer end by the deadline: now plus its
// time limit is past it (with no time limit, once the deadline itself has
// passed, as nothing says how long it would run). A running job is stopped
// at the deadline. Either way it ends DEADLINE (job_state_machine.h).
//
// Pure function, thread-safe.
#pragma once

#include <cstdint>

#include "absl/status/status.h"

namespace gantry {

// A submission's deadline, as Slurm checks it: not in the past, not before
// --begin, and not before the time limit could run out if the job started
// now. `begin_ms` 0: at once. Errors: INVALID_ARGUMENT saying which.
absl::Status CheckDeadline(int64_t now_ms, int64_t deadline_ms,
                           int64_t begin_ms, uint64_t time_limit_ms);

// `deadline_ms` 0: no deadline; `time_limit_ms` 0: unlimited.
bool MissesDeadline(int64_t now_ms, int64_t deadline_ms, uint64_t time_limit_ms,
                    bool running);

}  // namespace gantry
