#include "daemon/simulator/cluster_model.h"

#include "absl/strings/str_cat.h"

namespace gantry::sim {

uint32_t ClusterShape::Leaves() const {
  return (nodes + nodes_per_leaf - 1) / nodes_per_leaf;
}

uint32_t ClusterShape::Spines() const {
  return (Leaves() + leaves_per_spine - 1) / leaves_per_spine;
}

absl::Status ValidateShape(const ClusterShape& shape) {
  if (shape.nodes == 0 || shape.gpus_per_node == 0 || shape.cpus_per_gpu == 0 ||
      shape.nodes_per_leaf == 0 || shape.leaves_per_spine == 0) {
    return absl::InvalidArgumentError(
        "cluster shape: --nodes, --gpus-per-node, --nodes-per-leaf and "
        "--leaves-per-spine must all be at least 1");
  }
  return absl::OkStatus();
}

uint32_t LeafOf(const ClusterShape& shape, std::size_t node_index) {
  return static_cast<uint32_t>(node_index / shape.nodes_per_leaf);
}

std::vector<NodeSnapshot> BuildNodes(const ClusterShape& shape) {
  std::vector<NodeSnapshot> nodes(shape.nodes);
  const bool has_core = shape.Spines() > 1;
  for (uint32_t i = 0; i < shape.nodes; ++i) {
    NodeSnapshot& node = nodes[i];
    node.name = absl::StrCat("node", i);
    node.partitions = {kPartition};
    node.cpus_total = node.cpus_free = shape.gpus_per_node * shape.cpus_per_gpu;
    node.gpus_total = shape.gpus_per_node;
    for (uint32_t g = 0; g < shape.gpus_per_node; ++g) {
      node.free_gpus.push_back(g);
      node.gpu_hca.push_back(absl::StrCat("mlx5_", g));
    }
    const uint32_t leaf = LeafOf(shape, i);
    node.switch_path = {absl::StrCat("leaf", leaf),
                        absl::StrCat("spine", leaf / shape.leaves_per_spine)};
    if (has_core) node.switch_path.push_back("core");
  }
  return nodes;
}

GangShape GangFor(uint32_t gpus, const ClusterShape& shape) {
  GangShape gang;
  if (gpus <= shape.gpus_per_node) {
    gang.nodes = 1;
    gang.gpus_per_node = gpus;
  } else {
    gang.nodes = (gpus + shape.gpus_per_node - 1) / shape.gpus_per_node;
    gang.gpus_per_node = shape.gpus_per_node;
  }
  return gang;
}

}  // namespace gantry::sim
