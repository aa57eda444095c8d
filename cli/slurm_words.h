// Slurm's vocabulary as the CLI accepts it: job state names in squeue's and
// scancel's -t lists (long and short forms), and signal names as scancel
// --signal takes them.
//
// Pure; thread-safe.
#pragma once

#include <set>
#include <string_view>

#include "absl/status/statusor.h"
#include "gantry/v1/types.pb.h"

namespace gantry::cli {

// "PD,R", "pending,running", "all" (every state) -> the set. Case does not
// matter; each item is a long name (PENDING, RUNNING, COMPLETED, FAILED,
// CANCELLED, TIMEOUT, NODE_FAIL, OUT_OF_MEMORY) or its short form (PD, R,
// CD, F, CA, TO, NF, OOM). INVALID_ARGUMENT names an unknown item and lists
// the known ones.
absl::StatusOr<std::set<v1::JobState>> ParseJobStates(std::string_view list);

// True for the states a job ends in.
bool IsFinished(v1::JobState state);

// "USR1", "SIGUSR1", "usr1" or "10" -> 10. INVALID_ARGUMENT for anything
// else (names the word, says what is accepted).
absl::StatusOr<int> ParseSignal(std::string_view text);

}  // namespace gantry::cli
