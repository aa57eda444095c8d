#include "daemon/controller/core/submission_spread.h"

#include "absl/strings/str_cat.h"
#include "common/request_limits.h"

namespace gantry {

absl::Status ApplyJobSpread(const LargestNodes& largest, bool nodes_given,
                            bool per_node_given, uint32_t max_nodes,
                            v1::JobSpec& spec) {
  const bool spread_tasks = !nodes_given && spec.ntasks() > 1;
  const bool spread_gpus = spec.gpus() > 0 && spec.gpus_per_node() == 0;
  if (spread_tasks || spread_gpus) {
    SpreadRequest request;
    request.nodes = nodes_given ? spec.nodes() : 0;
    request.ntasks = spec.ntasks();
    request.ntasks_per_node = per_node_given ? spec.ntasks_per_node() : 0;
    request.cpus_per_task = spec.cpus_per_task();
    request.gpus = spec.gpus();
    request.gpus_per_node = spec.gpus_per_node();
    const JobSpread spread = SpreadJob(request, largest, max_nodes);
    if (spec.ntasks() > 0 && spec.ntasks() < spread.nodes) {
      return absl::InvalidArgumentError(
          absl::StrCat("--ntasks=", spec.ntasks(), " is fewer than the ",
                       spread.nodes, " node(s) --gpus=", spec.gpus(),
                       " needs (at most ", largest.gpus(), " GPUs per node)"));
    }
    spec.set_nodes(spread.nodes);
    spec.set_ntasks_per_node(spread.ntasks_per_node);
    spec.set_gpus_per_node(spread.gpus_per_node);
  }
  if (spec.mem_per_gpu_mb() > 0 && spec.mem_per_node_mb() == 0) {
    if (spec.gpus_per_node() == 0) {
      return absl::InvalidArgumentError(
          "--mem-per-gpu needs GPUs (--gpus, --gpus-per-node, "
          "--gpus-per-task or --gres=gpu:N)");
    }
    const uint64_t memory = spec.mem_per_gpu_mb() * spec.gpus_per_node();
    if (memory > limits::kMaxMemoryPerNodeMb) {
      return absl::InvalidArgumentError("more than 1 PiB of memory per node");
    }
    spec.set_mem_per_node_mb(memory);
  }
  return absl::OkStatus();
}

}  // namespace gantry
