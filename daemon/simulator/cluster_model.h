// The simulated cluster: identical GPU nodes in a fat tree (nodes per leaf
// switch, leaves per spine switch, one core above the spines when there is
// more than one), as the scheduler core's NodeSnapshot vector. Also how a
// trace job's GPU count becomes a gang request. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "daemon/scheduler/scheduler.h"

namespace gantry::sim {

inline constexpr char kPartition[] = "gpu";

struct ClusterShape {
  uint32_t nodes = 64;
  uint32_t gpus_per_node = 8;
  uint32_t cpus_per_gpu = 8;
  uint32_t nodes_per_leaf = 8;
  uint32_t leaves_per_spine = 8;

  uint32_t Leaves() const;
  uint32_t Spines() const;
  uint64_t TotalGpus() const { return uint64_t{nodes} * gpus_per_node; }
};

// INVALID_ARGUMENT when a count is zero.
absl::Status ValidateShape(const ClusterShape& shape);

// Node i is "node<i>" under leaf i / nodes_per_leaf, spine leaf /
// leaves_per_spine; all idle, in partition kPartition, GPU g paired with HCA
// "mlx5_<g>".
std::vector<NodeSnapshot> BuildNodes(const ClusterShape& shape);

uint32_t LeafOf(const ClusterShape& shape, std::size_t node_index);

// How a job asking for `gpus` GPUs is placed: up to gpus_per_node GPUs on
// one node; more take ceil(gpus / gpus_per_node) whole nodes.
struct GangShape {
  uint32_t nodes = 1;
  uint32_t gpus_per_node = 0;
  uint32_t LeavesNeeded(const ClusterShape& shape) const {
    return (nodes + shape.nodes_per_leaf - 1) / shape.nodes_per_leaf;
  }
};
GangShape GangFor(uint32_t gpus, const ClusterShape& shape);

}  // namespace gantry::sim
