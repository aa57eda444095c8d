// Where a one-node job goes under topology-aware placement. A job on one
// node uses no switch, so the leaf matters only as a tie-break: the node is
// chosen by how tightly the job fills it (best fit), across every leaf.
// Choosing the leaf first (the one with the fewest fitting nodes) would
// count a node with one free GPU the same as an idle one, so small jobs
// broke whole nodes while fragmented ones stayed free and the whole-node
// jobs behind them waited (issue 23 point 8). Internal to the scheduler
// core; pure, thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "daemon/scheduler/scheduler_placement.h"
#include "daemon/scheduler/scheduler_types.h"

namespace gantry::scheduler_internal {

// The fitting node a one-node job should take: a restart's hot spares
// first, then the node with the fewest free GPUs, then the fewest free
// CPUs; among nodes equal in that, the one on the leaf with the fewest
// fitting nodes (gangs keep the roomier leaves whole), then the lowest
// index. `leaves` are the leaves that have a fitting node, `fitting[leaf]`
// those nodes; at least one node must fit.
std::size_t TightestSingleNode(
    const std::vector<std::vector<std::size_t>>& fitting,
    const std::vector<uint32_t>& leaves, const FreeResources& free,
    const std::vector<NodeSnapshot>& nodes, bool prefer_spares);

}  // namespace gantry::scheduler_internal
