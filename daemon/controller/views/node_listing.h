// sinfo's and `gantry nodes`' table: every node with what is allocated on
// it and its leaf switches, and the partitions.
#pragma once

#include <vector>

#include "daemon/controller/core/cluster_state.h"
#include "daemon/controller/core/switch_tree.h"
#include "daemon/scheduler/partition_config.h"
#include "gantry/v1/client.pb.h"

namespace gantry {

v1::ListNodesResponse ListNodes(const ClusterState& state,
                                const SwitchTree& switch_tree,
                                const std::vector<PartitionConfig>& partitions);

}  // namespace gantry
