// The scheduler core's data: the cluster snapshot it reads (nodes, pending
// and running jobs) and the decisions it returns (starts, waits,
// reservations). Plain values with no behaviour beyond small predicates, so
// the scheduler (daemon/scheduler/scheduler.h), its placement
// (scheduler_placement.h), priority ordering and the controller's
// translation of records into this input all share them without including
// each other. See scheduler.h for what the fields mean to a pass.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/ids.h"
#include "common/node_constraint.h"

namespace gantry {

// A dataset as the scheduler matches it between a job and the node caches:
// the uid of the job's owner and the dataset's source directory on shared
// storage (absolute, normal form). The controller computes the same key
// from a job's --dataset=NAME:PATH and from an agent's cache inventory. The
// content version is left out on purpose: placement only prefers a node,
// and a copy found stale at staging is staged again, costing what a miss
// would have cost.
struct DatasetKey {
  uint32_t owner_uid = 0;
  std::string path;
  // clang-tidy 14 reads the defaulted comparison as a 0 for a pointer.
  // NOLINTNEXTLINE(modernize-use-nullptr)
  auto operator<=>(const DatasetKey&) const = default;
};

// A dataset a job reads, with its size in bytes when known (0: unknown,
// weighed as one byte so that a hit still counts).
struct DatasetNeed {
  DatasetKey key;
  uint64_t bytes = 0;
};

// What a job with datasets puts first (--dataset-locality).
enum class DatasetLocality : uint8_t {
  // The switch span (level, then leaves) as without datasets; among
  // placements of the same span, the one finding the most bytes cached.
  kTopology,
  // The most bytes cached, then the narrowest span that finds them: a job
  // that reads far more than it communicates may take a wider span.
  kCache,
};

struct NodeSnapshot {
  std::string name;
  bool schedulable = true;  // registered, reachable, not drained
  bool hot_spare = false;
  std::vector<std::string> partitions;
  uint32_t cpus_total = 0;
  uint32_t cpus_free = 0;
  std::vector<uint32_t> free_gpus;  // GPU indices, ascending
  uint32_t gpus_total = 0;
  uint64_t mem_total_mb = 0;
  uint64_t mem_free_mb = 0;
  // Switch names from the node's leaf up to the root. Empty: not in the
  // tree. With no tree at all every node is empty and the cluster is one
  // flat leaf; beside nodes in a tree, an empty one is unlisted, placed
  // only as SchedulerOptions::unlisted_nodes says (fabric_parts.h).
  std::vector<std::string> switch_path;
  // The connected part of the fabric the node is in (Topology::Part's
  // name): nodes of different parts reach each other through no switch, so
  // no job spans two. Empty: the last switch of switch_path names it, right
  // for a tree whose switches have one parent each.
  std::string fabric_part;
  // Per GPU index: the name of its nearest compute HCA, "" when unknown.
  std::vector<std::string> gpu_hca;
  // Where the GPUs sit (PCIe switch, host bridge, NUMA node, package), as
  // gpu_choice.h's GpuGroups gives it; empty: unknown.
  std::vector<uint32_t> gpu_groups;
  std::vector<std::string> features;  // for --constraint
  // For --gres=gpu:TYPE:N: the GPUs' distinct model names, lower case, and
  // their types (common/gpu_type.h GpuTypeOf).
  std::vector<std::string> gpu_models;
  std::vector<std::string> gpu_types;
  // Datasets in the node's cache, sorted and unique (see DatasetKey).
  std::vector<DatasetKey> cached_datasets;
};

struct PendingJob {
  JobId id;
  std::string partition;
  uint32_t nodes = 1;
  // --nodes=MIN-MAX: nodes is MAX, this MIN; 0: exactly `nodes`. The job
  // starts on as many as fit now, at least MIN (node_range.h).
  uint32_t min_nodes = 0;
  uint32_t max_tasks_per_node = 1;  // the most ranks any one node runs
  uint32_t cpus_per_task = 1;
  uint32_t gpus_per_node = 0;
  uint64_t mem_per_node_mb = 0;  // 0: no memory request
  bool is_restart = false;       // a later attempt of a failed job
  std::string user;
  int64_t submit_time_ms = 0;
  int64_t time_limit_ms = 0;  // 0: unlimited
  bool exclusive = false;     // whole nodes: no other job shares them
  uint32_t max_switches = 0;  // --switches=N: at most N leaves; 0: no limit
  // --switches=N@maxwait: from this time on, any placement will do.
  // 0 with max_switches set: wait forever.
  int64_t switches_deadline_ms = 0;
  double priority = 0;  // informational; the queue order is what counts
  // --nodelist: nodes the job's allocation must hold, all of them (ranks
  // are laid out in node-list order, as every job's: SetAllocation);
  // --exclude: nodes it must not use;
  // --constraint: features its nodes need. A job with any of these is
  // placed on its own (no memo of other jobs' outcomes applies to it).
  std::vector<std::string> required_nodes;
  std::vector<std::string> excluded_nodes;
  std::shared_ptr<const NodeConstraint> constraint;
  // --gres=gpu:TYPE:N: nodes with a GPU of type TYPE, or whose model has
  // TYPE as whole words, or a feature TYPE (case does not matter); lower
  // case, empty: any.
  std::string gpu_type;
  // --dataset=NAME:PATH: what the job reads; nodes holding them are
  // preferred as dataset_locality says (daemon/scheduler/cache_preference.h).
  std::vector<DatasetNeed> datasets;
  DatasetLocality dataset_locality = DatasetLocality::kTopology;
  bool HasNodeRestrictions() const {
    return !required_nodes.empty() || !excluded_nodes.empty() ||
           constraint != nullptr || !gpu_type.empty();
  }
};

struct NodeShare {
  NodeId node;  // which node of the snapshot
  uint32_t cpus = 0;
  std::vector<uint32_t> gpus;
  uint64_t mem_mb = 0;
};

// A job already holding resources; its shares are part of the snapshot's
// used resources (not of the free ones) and return at expected_end_ms.
struct RunningJob {
  JobId id;
  std::vector<NodeShare> shares;
  int64_t expected_end_ms = 0;
  bool exclusive = false;  // holds its nodes whole
};

// Where nodes missing from the imported switch tree may take jobs
// (gantryd --unlisted-nodes; fabric_parts.h has the rules).
enum class UnlistedNodes {
  kLast,        // any job, only when no placement on listed nodes fits now
  kSingleNode,  // single-node jobs only, and last
  kNever,       // no job (as Slurm's tree plugin)
};

struct SchedulerOptions {
  bool backfill = true;
  bool topology_aware = true;  // false: first fit in node order
  int64_t now_ms = 0;
  UnlistedNodes unlisted_nodes = UnlistedNodes::kLast;
};

struct JobStart {
  JobId job_id;
  // The chosen nodes; the controller lays the ranks out in the order of
  // the job's node list (SetAllocation), as Slurm does.
  std::vector<NodeShare> shares;
  uint32_t leaf_switches = 0;  // distinct leaves the gang spans
  bool backfilled = false;     // started ahead of a reserved job
};

struct JobWait {
  JobId job_id;
  // Slurm reason word: Resources, Priority, Topology (--switches not yet
  // satisfiable), PartitionNodeLimit (can never fit).
  std::string reason;
  std::string detail;             // one sentence for humans
  int64_t expected_start_ms = 0;  // set for a reserved job; 0: unknown
};

// Nodes held back for a blocked job (EASY backfill). `nodes` are the ones
// the job is expected to start on at start_ms, in rank order, chosen as its
// start would choose them (cache preference included): where the
// controller can stage the job's datasets while it waits.
struct Reservation {
  JobId job_id;
  int64_t start_ms = 0;
  std::vector<NodeId> nodes;
};

struct ScheduleResult {
  std::vector<JobStart> starts;
  std::vector<JobWait> waits;
  std::vector<Reservation> reservations;  // at most one per partition
};

}  // namespace gantry
