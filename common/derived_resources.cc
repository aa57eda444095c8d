#include "common/derived_resources.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "common/ntasks_per_gpu.h"
#include "common/option_values.h"
#include "common/text.h"

namespace gantry {
namespace {

// --nodelist names nodes the allocation must hold: with no --nodes (or
// fewer), the job asks for that many, as Slurm does.
absl::Status ResolveNodeLists(JobRequest& request) {
  for (const std::string& name : request.nodelist) {
    if (std::find(request.exclude.begin(), request.exclude.end(), name) !=
        request.exclude.end()) {
      return absl::InvalidArgumentError(
          Concat("node ", name, " is both in --nodelist and in --exclude"));
    }
  }
  const auto listed = static_cast<uint32_t>(request.nodelist.size());
  if (listed == 0) return absl::OkStatus();
  if (request.nodes && *request.nodes < listed) {
    request.warnings.push_back(Concat("--nodes=", *request.nodes, " raised to ",
                                      listed, ": --nodelist names ", listed,
                                      " node(s) and the job gets all of them"));
  }
  if (!request.nodes || *request.nodes < listed) request.nodes = listed;
  // Every listed node is in every allocation: a range cannot go below them.
  if (request.min_nodes && *request.min_nodes < listed) {
    request.min_nodes = listed;
  }
  if (request.min_nodes && *request.min_nodes >= *request.nodes) {
    request.min_nodes.reset();
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ResolveDerivedResources(JobRequest& request) {
  if (absl::Status lists = ResolveNodeLists(request); !lists.ok()) {
    return lists;
  }
  if (absl::Status per_gpu = ResolveNtasksPerGpu(request); !per_gpu.ok()) {
    return per_gpu;
  }
  // -n N with --ntasks-per-node=M and no -N: as many nodes as the tasks
  // need (Slurm: "-n 8 --ntasks-per-node=4" is 2 nodes).
  if (!request.nodes && request.ntasks && request.ntasks_per_node &&
      *request.ntasks_per_node > 0) {
    request.nodes = (*request.ntasks + *request.ntasks_per_node - 1) /
                    *request.ntasks_per_node;
  }
  // --gpus with neither -N nor --gpus-per-node: gantryd picks the node
  // count from its nodes' real GPU counts (JobSpec.gpus), as Slurm does
  // ("-G 8" on 4-GPU nodes is 2 nodes). With --gpus-per-node: as many
  // nodes as G / P, as -n with --ntasks-per-node.
  bool nodes_from_gpus = false;
  if (request.gpus && !request.nodes && request.gpus_per_node &&
      *request.gpus_per_node > 0 && !request.gpus_per_task) {
    nodes_from_gpus = true;
    request.nodes =
        (*request.gpus + *request.gpus_per_node - 1) / *request.gpus_per_node;
    if (*request.gpus % *request.gpus_per_node != 0) {
      request.warnings.push_back(Concat(
          "--gpus=", *request.gpus,
          " at --gpus-per-node=", *request.gpus_per_node, ": ", *request.nodes,
          " node(s) with ", *request.gpus_per_node, " GPU(s) each"));
    }
  } else if (request.gpus && !request.nodes && !request.gpus_per_node &&
             !request.gpus_per_task) {
    request.gpus_left_to_controller = true;
  }
  const uint32_t nodes = request.nodes.value_or(1);
  uint32_t tasks_per_node = request.ntasks_per_node.value_or(0);
  if (tasks_per_node == 0) {
    tasks_per_node = request.ntasks ? (*request.ntasks + nodes - 1) / nodes : 1;
  }
  auto set_gpus = [&](uint32_t per_node, const char* from) -> absl::Status {
    if (request.gpus_per_node && *request.gpus_per_node != per_node) {
      return absl::InvalidArgumentError(
          Concat(from, " asks for ", per_node,
                 " GPU(s) per node but "
                 "--gpus-per-node (or --gres) says ",
                 *request.gpus_per_node));
    }
    request.gpus_per_node = per_node;
    return absl::OkStatus();
  };
  if (request.gpus_per_task) {
    absl::Status status =
        set_gpus(*request.gpus_per_task * tasks_per_node, "--gpus-per-task");
    if (!status.ok()) return status;
  }
  if (request.gpus && !request.gpus_left_to_controller && !nodes_from_gpus) {
    const uint32_t per_node = (*request.gpus + nodes - 1) / nodes;
    if (*request.gpus % nodes != 0) {
      request.warnings.push_back(Concat(
          "--gpus=", *request.gpus, " over ", nodes, " node(s): ", per_node,
          " GPU(s) on each node (", per_node * nodes, " in all)"));
    }
    absl::Status status = set_gpus(per_node, "--gpus");
    if (!status.ok()) return status;
  }
  const int memory_options = (request.mem_per_node_mb ? 1 : 0) +
                             (request.mem_per_cpu_mb ? 1 : 0) +
                             (request.mem_per_gpu_mb ? 1 : 0);
  if (memory_options > 1) {
    return absl::InvalidArgumentError(
        "--mem, --mem-per-cpu and --mem-per-gpu are mutually exclusive");
  }
  if (request.mem_per_cpu_mb) {
    request.mem_per_node_mb = *request.mem_per_cpu_mb *
                              request.cpus_per_task.value_or(1) *
                              tasks_per_node;
  }
  if (request.mem_per_gpu_mb && request.gpus_left_to_controller) {
    // Known once gantryd has spread the GPUs (JobSpec.mem_per_gpu_mb).
  } else if (request.mem_per_gpu_mb) {
    if (request.gpus_per_node.value_or(0) == 0) {
      return absl::InvalidArgumentError(
          "--mem-per-gpu needs GPUs (--gpus, --gpus-per-node, "
          "--gpus-per-task or --gres=gpu:N)");
    }
    request.mem_per_node_mb = *request.mem_per_gpu_mb * *request.gpus_per_node;
  }
  if (request.mem_per_node_mb &&
      *request.mem_per_node_mb > kMaxMemoryPerNodeMb) {
    return absl::InvalidArgumentError("more than 1 PiB of memory per node");
  }
  if (request.mem_per_node_mb && *request.mem_per_node_mb == 0) {
    // Slurm's --mem=0: all of each node's memory, which only a whole node
    // gives.
    request.mem_per_node_mb.reset();
    if (!request.exclusive) {
      request.exclusive = true;
      request.warnings.push_back(
          "--mem=0 (all of a node's memory): the job gets whole nodes, as "
          "with --exclusive");
    }
  }
  if (request.elastic && !request.min_nodes) {
    request.warnings.push_back(
        "--elastic has no effect without a node range (--nodes=MIN-MAX): a "
        "job of one size never grows");
  }
  return absl::OkStatus();
}

}  // namespace gantry
