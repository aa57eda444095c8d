// Submission: a job spec's node count and per-node shape when -n or
// -G/--gpus decide them (daemon/scheduler/job_spread.h), applied to the spec
// before it is stored, with --mem-per-gpu turned into memory per node once
// the GPUs per node are known.
//
// Pure function, thread-safe.
#pragma once

#include "absl/status/status.h"
#include "daemon/scheduler/job_spread.h"
#include "gantry/v1/types.pb.h"

namespace gantry {

// `nodes_given` / `per_node_given`: whether the user set -N /
// --ntasks-per-node (the spec holds the defaults by now). Errors:
// INVALID_ARGUMENT when -n is fewer than the nodes --gpus needs, or the
// memory per node is above the limit.
absl::Status ApplyJobSpread(const LargestNodes& largest, bool nodes_given,
                            bool per_node_given, uint32_t max_nodes,
                            v1::JobSpec& spec);

}  // namespace gantry
