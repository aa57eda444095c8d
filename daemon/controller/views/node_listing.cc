#include "daemon/controller/views/node_listing.h"

#include <string>

#include "common/hostlist.h"

namespace gantry {

v1::ListNodesResponse ListNodes(
    const ClusterState& state, const SwitchTree& switch_tree,
    const std::vector<PartitionConfig>& partitions) {
  v1::ListNodesResponse response;
  for (const auto& [name, node] : state.nodes) {
    v1::NodeRecord* record = response.add_nodes();
    *record = node.record;
    record->set_cpus_allocated(node.usage.cpus);
    record->set_gpus_allocated(static_cast<uint32_t>(node.usage.gpus.size()));
    record->set_mem_allocated_mb(node.usage.mem_mb);
    for (const std::string& leaf : switch_tree.LeafSwitchesOf(name)) {
      record->add_leaf_switches(leaf);
    }
  }
  for (const PartitionConfig& partition : partitions) {
    v1::PartitionInfo* info = response.add_partitions();
    info->set_name(partition.name);
    info->set_is_default(partition.is_default);
    info->set_default_time_seconds(partition.default_time_seconds);
    info->set_max_time_seconds(partition.max_time_seconds);
    info->set_max_nodes(partition.max_nodes);
    info->set_nodes(partition.all_nodes
                        ? "ALL"
                        : CompressHostlist({partition.nodes.begin(),
                                            partition.nodes.end()}));
  }
  return response;
}

}  // namespace gantry
