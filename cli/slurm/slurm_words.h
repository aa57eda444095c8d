// Slurm's vocabulary as the CLI accepts it: job state names in squeue's and
// scancel's -t lists (long and short forms), and the words it prints for
// what is not set; signal names are in common/signal_name.h.
//
// Pure; thread-safe.
#pragma once

#include <set>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "gantry/v1/types.pb.h"

namespace gantry::cli {

// "PD,R", "pending,running", "all" (every state) -> the set. Case does not
// matter; each item is a long name (PENDING, RUNNING, COMPLETED, FAILED,
// CANCELLED, TIMEOUT, NODE_FAIL, OUT_OF_MEMORY) or its short form (PD, R,
// CD, F, CA, TO, NF, OOM). Slurm's states a Gantry job is never in
// (SUSPENDED, COMPLETING, CG, ...) give JOB_STATE_UNSPECIFIED, which matches
// no job. INVALID_ARGUMENT names an unknown item and lists the known ones.
absl::StatusOr<std::set<v1::JobState>> ParseJobStates(std::string_view list);

// True for the states a job ends in.
bool IsFinished(v1::JobState state);

// `value`, or Slurm's "(null)" for an empty one (squeue, scontrol).
std::string OrNull(const std::string& value);

}  // namespace gantry::cli
