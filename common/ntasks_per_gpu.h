// --ntasks-per-gpu=N (man sbatch): N tasks for every GPU of the job. With
// GPUs given (--gpus, --gpus-per-node, --gres) the task count follows from
// them; with --ntasks given instead, the job gets ceil(ntasks / N) GPUs.
// Called by ResolveDerivedResources before GPUs become a per-node count.
//
// Pure function, thread-safe.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "common/job_request.h"

namespace gantry {

// The most tasks --ntasks-per-gpu may make (as --ntasks's limit).
inline constexpr uint64_t kMaxNtasksPerGpuJob = 10'000'000;

// Sets `request.ntasks` (or `request.gpus`) from --ntasks-per-gpu, and adds
// a warning where steps cannot bind one GPU to each task (N > 1). Errors:
// INVALID_ARGUMENT with --gpus-per-task or --ntasks-per-node (Slurm
// refuses the same combinations), or with neither GPUs nor --ntasks.
absl::Status ResolveNtasksPerGpu(JobRequest& request);

}  // namespace gantry
