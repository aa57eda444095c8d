// Steps share their job's allocation as Slurm's do: on each node the
// running steps together hold at most the job's CPUs and GPUs there. A
// step holds all of the job's CPUs (and GPUs) on its nodes unless it is
// --exact/--exclusive (then only what its tasks ask for: CPUs per task,
// GPUs per task) or --overlap (then nothing, and it always fits). A step
// that does not fit now waits for the others; one that could never fit is
// refused by PlaceStep. Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gantry/v1/types.pb.h"

namespace gantry {

struct StepResourceAsk {
  bool exact = false;          // --exact / --exclusive
  bool overlap = false;        // --overlap
  uint32_t cpus_per_task = 0;  // 0: one
  uint32_t gpus_per_task = 0;  // 0: exact steps take none, others all
};

// Fits `placed` (PlaceStep's shares) beside the job's running steps of its
// current attempt: sets each share's CPUs and GPUs to what the step holds
// there. True when it fits now; false (placed unchanged) when running
// steps hold what it needs, with `busy` naming the node. INVALID_ARGUMENT
// when it could never fit in the job's share of a node.
absl::StatusOr<bool> FitStepResources(const v1::JobRecord& job,
                                      const StepResourceAsk& ask,
                                      std::vector<v1::NodeAllocation>& placed,
                                      std::string& busy);

}  // namespace gantry
