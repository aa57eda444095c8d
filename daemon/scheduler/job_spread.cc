#include "daemon/scheduler/job_spread.h"

#include <algorithm>

#include "daemon/scheduler/scheduler_placement.h"

namespace gantry {
namespace {

uint32_t CeilDiv(uint64_t a, uint64_t b) {
  return static_cast<uint32_t>((a + b - 1) / b);
}

}  // namespace

void LargestNodes::Add(const NodeSnapshot& node, const PendingJob& job) {
  if (!scheduler_internal::UsableBy(node, job)) return;
  cpus_ = std::max(cpus_, node.cpus_total);
  if (job.gpu_type.empty() ||
      scheduler_internal::HasGpuType(node, job.gpu_type)) {
    gpus_ = std::max(gpus_, node.gpus_total);
  }
}

JobSpread SpreadJob(const SpreadRequest& request, const LargestNodes& largest,
                    uint32_t max_nodes) {
  JobSpread spread;
  const uint32_t ntasks = request.ntasks;
  if (request.nodes > 0) {
    spread.nodes = request.nodes;
  } else {
    uint32_t nodes = 1;
    if (ntasks > 1 && request.ntasks_per_node > 0) {
      nodes = CeilDiv(ntasks, request.ntasks_per_node);
    } else if (ntasks > 1) {
      const uint32_t per_task = std::max<uint32_t>(request.cpus_per_task, 1);
      const uint32_t tasks_per_node = largest.cpus() / per_task;
      if (tasks_per_node > 0) nodes = CeilDiv(ntasks, tasks_per_node);
    }
    if (request.gpus > 0) {
      // --gpus-per-node with --gpus: G / P nodes, as -n with
      // --ntasks-per-node; else the largest node's GPUs.
      const uint32_t per_node =
          request.gpus_per_node > 0 ? request.gpus_per_node : largest.gpus();
      if (per_node > 0)
        nodes = std::max(nodes, CeilDiv(request.gpus, per_node));
    }
    spread.nodes =
        std::clamp<uint32_t>(nodes, 1, std::max<uint32_t>(max_nodes, 1));
  }
  spread.ntasks_per_node =
      request.ntasks_per_node > 0
          ? request.ntasks_per_node
          : (ntasks > 0 ? CeilDiv(ntasks, spread.nodes) : 1);
  spread.gpus_per_node = request.gpus_per_node;
  if (request.gpus > 0 && request.gpus_per_node == 0) {
    spread.gpus_per_node = CeilDiv(request.gpus, spread.nodes);
    spread.gpus_rounded_up = request.gpus % spread.nodes != 0;
  }
  return spread;
}

}  // namespace gantry
