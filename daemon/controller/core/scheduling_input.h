// The scheduler's input from the controller's records, and its decisions
// back into them: the one place a job record becomes a PendingJob, a node
// record a NodeSnapshot, and a JobStart an allocation
// (daemon/scheduler/scheduler_types.h). The scheduling pass and submission
// validation both go through here, so the scheduler and the "can any node
// ever hold this job" check see a job alike. Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/node_constraint.h"
#include "common/topology.h"
#include "daemon/scheduler/scheduler_types.h"
#include "gantry/v1/agent.pb.h"
#include "gantry/v1/types.pb.h"

namespace gantry {

// What the jobs placed on a node take of it (the sum of their shares).
struct NodeUsage {
  uint32_t cpus = 0;
  uint64_t mem_mb = 0;
  std::set<uint32_t> gpus;  // indices
};

// The parsed form of a spec's --constraint `text`: `cached` when it was
// parsed from the same text, else a new parse (null for no constraint; a
// damaged record's text, checked at submit, matches no node rather than
// any).
std::shared_ptr<const NodeConstraint> ParsedConstraintOf(
    const std::string& text, std::shared_ptr<const NodeConstraint> cached);

// The job as the scheduler sees it: size, partition, priority inputs,
// restrictions, datasets (keyed by the record's uid and each path, sizes
// unknown until SetDatasetSizes). `constraint` is the spec's parsed
// --constraint (null: none).
PendingJob PendingJobOf(const v1::JobRecord& record,
                        std::shared_ptr<const NodeConstraint> constraint);

// The node with what is free on it. `reachable`: its agent's stream is up.
// `topology`: the switch tree (null: none imported; the node is then on the
// one flat leaf). `cache`: what its agent last reported its dataset cache
// holds (entries without a source path key nothing and are left out).
NodeSnapshot NodeSnapshotOf(const v1::NodeRecord& record, bool reachable,
                            const NodeUsage& usage, const Topology* topology,
                            const v1::DatasetCacheReport& cache);

// The size of each cached dataset, from the nodes' cache reports (the
// largest reported copy), for weighing a job's datasets.
using DatasetSizes = std::map<DatasetKey, uint64_t>;
void AddDatasetSizes(const v1::DatasetCacheReport& cache, DatasetSizes& sizes);
// Sets each of the job's datasets' size from `sizes` (0 where no node
// reports a copy).
void SetDatasetSizes(const DatasetSizes& sizes, PendingJob& job);

// Sets only what never changes while the node runs: its partitions, spare
// mark and size, enough for NodeCouldEverHold (daemon/scheduler/scheduler.h).
// Reuses `snapshot`'s storage, so a check of every node on each submission
// allocates nothing per node.
void SetNodeCapacity(const v1::NodeRecord& record, NodeSnapshot& snapshot);

// Sets what --gres=gpu:TYPE:N and --constraint look at: the node's
// features, its GPUs' distinct models (lower case) and their types.
void SetGpuTypes(const v1::NodeRecord& record, NodeSnapshot& snapshot);

// The positions of `nodes` in the order of their node list as Slurm
// writes it and scripts expand it (CompressHostlist, then ExpandHostlist):
// sorted numerically within a prefix. Names that are not hostlist names
// keep their order.
std::vector<size_t> InNodelistOrder(const std::vector<std::string>& nodes);

// The scheduler's decision back into the record: the allocation in rank
// order, which is the order of the job's node list (InNodelistOrder),
// `names` being the snapshot's node names by index.
void SetAllocation(const JobStart& start,
                   const std::vector<const std::string*>& names,
                   v1::JobRecord& record);

}  // namespace gantry
