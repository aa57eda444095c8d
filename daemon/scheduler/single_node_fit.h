// Where a one-node job goes under topology-aware placement. Such a job uses
// no switch, so what matters is what it leaves for others: idle nodes for
// whole-node jobs, and idle nodes gathered under few leaves for gangs.
// Choosing the leaf first (the one with the fewest fitting nodes, as for a
// gang) counted a node with one free GPU the same as an idle one, so small
// jobs broke idle nodes while fragmented ones stayed free, and the
// whole-node jobs behind them waited (issue 23 point 8). Internal to the
// scheduler core; pure, thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "daemon/scheduler/scheduler_placement.h"
#include "daemon/scheduler/scheduler_types.h"

namespace gantry::scheduler_internal {

// The fitting node a one-node job should take, by these rules in order:
//  1. a restart's hot spares first;
//  2. a node already in use before an idle one (nothing free is wasted by
//     filling a used node; an idle node broken is lost to whole-node jobs);
//  3. a node on a leaf with no idle node before one on a leaf that has
//     some: the used nodes there drain and the leaf comes back whole for a
//     gang;
//  4. the fewest free GPUs (best fit), then the leaf with the fewest idle
//     nodes, then the fewest free CPUs, then the leaf with the fewest
//     fitting nodes, then the lowest index.
// `leaves` are the leaves that have a fitting node, `fitting[leaf]` those
// nodes; at least one node must fit.
std::size_t ChooseSingleNode(
    const std::vector<std::vector<std::size_t>>& fitting,
    const std::vector<uint32_t>& leaves, const FreeResources& free,
    const std::vector<NodeSnapshot>& nodes, bool prefer_spares);

}  // namespace gantry::scheduler_internal
