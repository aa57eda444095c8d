#include "common/ntasks_per_gpu.h"

#include <cstdint>

#include "common/text.h"

namespace gantry {

absl::Status ResolveNtasksPerGpu(JobRequest& request) {
  if (!request.ntasks_per_gpu) return absl::OkStatus();
  const uint32_t per_gpu = *request.ntasks_per_gpu;
  if (request.gpus_per_task) {
    return absl::InvalidArgumentError(
        "--ntasks-per-gpu and --gpus-per-task are mutually exclusive");
  }
  if (request.ntasks_per_node) {
    return absl::InvalidArgumentError(
        "--ntasks-per-gpu and --ntasks-per-node are mutually exclusive");
  }
  uint64_t gpus = 0;
  if (request.gpus) {
    gpus = *request.gpus;
  } else if (request.gpus_per_node) {
    gpus = uint64_t{*request.gpus_per_node} * request.nodes.value_or(1);
  }
  if (gpus > 0 && !request.ntasks) {
    const uint64_t tasks = gpus * per_gpu;
    if (tasks > kMaxNtasksPerGpuJob) {
      return absl::InvalidArgumentError(
          Concat("--ntasks-per-gpu=", per_gpu, " with ", gpus,
                 " GPU(s) is more than ", kMaxNtasksPerGpuJob, " tasks"));
    }
    request.ntasks = static_cast<uint32_t>(tasks);
  } else if (gpus == 0 && request.ntasks) {
    // Slurm's first way: the GPUs follow from the tasks, of any type.
    request.gpus = (*request.ntasks + per_gpu - 1) / per_gpu;
  } else if (gpus == 0) {
    return absl::InvalidArgumentError(
        "--ntasks-per-gpu needs GPUs (--gpus, --gpus-per-node or "
        "--gres=gpu:N) or --ntasks");
  }
  if (per_gpu > 1) {
    request.warnings.push_back(Concat(
        "--ntasks-per-gpu=", per_gpu, ": ", per_gpu,
        " tasks share each GPU, and each sees all of the job's GPUs on its "
        "node (one GPU per task is bound only with --ntasks-per-gpu=1)"));
  }
  return absl::OkStatus();
}

}  // namespace gantry
