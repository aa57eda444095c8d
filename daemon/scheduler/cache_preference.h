// Placement by dataset cache and topology together, for a whole gang. Once
// the topology-aware placer has chosen a placement, a job that reads
// datasets (PendingJob::datasets) may be moved to other fitting nodes that
// already hold them in their cache:
//  - DatasetLocality::kTopology (the default): only to a placement as good
//    for the switch tree (no wider switch span: the level that joins the
//    nodes, then the number of leaves; and leaves of the same fill: each
//    leaf it uses has as many fitting nodes, and gives as many, as one of
//    the placer's, so the same room stays behind) that finds strictly more
//    bytes cached; otherwise it keeps the placer's leaves, as many nodes on
//    each, and picks those nodes by bytes cached, then tightness, then
//    other datasets held. A one-node job uses no
//    switch; it moves only to a node of the same leaf as tight a fit as the
//    one chosen (the same free GPUs and CPUs, and idle only if that one
//    was), so the cache never undoes packing.
//  - DatasetLocality::kCache: to the placement that finds the most bytes
//    cached, at the narrowest span that finds them (--switches still
//    holds).
// At equal bytes cached (and fit), nodes holding fewer other datasets come
// first: the job's copy will evict less there (a job whose data is cached
// nowhere would otherwise land on the nodes packing favours and evict, every
// time, the data the jobs before it left there; gantry-sim cache measures
// this). Remaining ties keep the placer's choice. Internal to the scheduler
// core; pure, thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "daemon/scheduler/scheduler_placement.h"
#include "daemon/scheduler/scheduler_types.h"

namespace gantry::scheduler_internal {

// Bytes of the job's datasets the node holds (an unknown size counts one).
uint64_t CachedBytes(const NodeSnapshot& node, const PendingJob& job);

// The switch span of a set of nodes as the placer measures it: (level that
// joins them, leaves), less is better.
using SpanFunction = std::function<std::pair<uint32_t, uint32_t>(
    const std::vector<std::size_t>&)>;

struct CacheChoiceInput {
  const std::vector<NodeSnapshot>* nodes = nullptr;
  const FabricIndex* fabric = nullptr;
  const FreeResources* free = nullptr;
  const PendingJob* job = nullptr;
  // Fitting nodes by leaf (ascending within a leaf), and the leaves that
  // have any: what the placer chose from.
  const std::vector<std::vector<std::size_t>>* fitting = nullptr;
  const std::vector<uint32_t>* leaves = nullptr;
  // --switches when enforced, else 0.
  uint32_t max_leaves = 0;
  SpanFunction span_of;
};

// The placement to use instead of `chosen` (a kPlaced placement from the
// same fitting nodes), or `chosen` itself; see the file comment.
Placement PreferCachedNodes(const CacheChoiceInput& input, Placement chosen);

}  // namespace gantry::scheduler_internal
