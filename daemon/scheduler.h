// The scheduler core: a pure function from a cluster snapshot, the ordered
// pending queue and the running jobs to decisions (start these jobs on these
// nodes with these GPUs; why the others wait; what is reserved for whom). No
// I/O, clock, threads or RPC types, so the controller, tests and the trace
// simulator all run the same code. Thread-safe (no state).
//
// Placement is gang (all-or-nothing) and topology-aware: among feasible
// placements the lowest switch level that can hold the job, then the fewest
// leaf switches, then the tightest fit (fullest leaves that still fit, to
// keep whole leaves free for big jobs). On each node GPUs are chosen so they
// spread over distinct HCAs, which pairs every rank's GPU with its own NIC.
//
// Queue policy (per partition):
//  - backfill=false: strict priority order; the first job that cannot start
//    blocks the jobs behind it in its partition (reason "Priority").
//  - backfill=true (EASY): the first blocked job of each partition gets a
//    reservation: the earliest time enough nodes free up, computed from the
//    running jobs' expected_end_ms. A lower job starts now only if it fits
//    now and either ends (now + time_limit) before that time or uses none of
//    the reserved nodes. A job with time_limit_ms 0 is taken to run forever.
//
// A job that can never fit on its partition's nodes does not block anyone
// and waits with reason "PartitionNodeLimit".
//
// Node restrictions (--nodelist, --exclude, --constraint) narrow the nodes a
// job may use. With a matching-OR constraint ([a|b]) each choice is tried
// in turn, all nodes on the same one. Listed nodes come first in rank order;
// when the job asks for more nodes than it lists, the rest are placed as
// any job's would be.
//
// Hot spares: nodes marked hot_spare take only restarts of failed jobs, and
// a restart takes spares before other nodes, so a failed gang comes back
// fast even on a full cluster.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/node_constraint.h"

namespace gantry {

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
  // tree; all such nodes are treated as one flat leaf.
  std::vector<std::string> switch_path;
  // Per GPU index: the name of its nearest compute HCA, "" when unknown.
  std::vector<std::string> gpu_hca;
  std::vector<std::string> features;  // for --constraint
  // The GPUs' model names, lower case, for --gres=gpu:TYPE:N.
  std::vector<std::string> gpu_models;
};

struct PendingJob {
  uint64_t id = 0;
  std::string partition;
  uint32_t nodes = 1;
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
  // start on them, in this order); --exclude: nodes it must not use;
  // --constraint: features its nodes need. A job with any of these is
  // placed on its own (no memo of other jobs' outcomes applies to it).
  std::vector<std::string> required_nodes;
  std::vector<std::string> excluded_nodes;
  std::shared_ptr<const NodeConstraint> constraint;
  // --gres=gpu:TYPE:N: nodes with a GPU model naming TYPE or a feature
  // TYPE (case does not matter); lower case, empty: any.
  std::string gpu_type;
  bool HasNodeRestrictions() const {
    return !required_nodes.empty() || !excluded_nodes.empty() ||
           constraint != nullptr || !gpu_type.empty();
  }
};

struct NodeShare {
  std::size_t node_index = 0;  // into the snapshot's node vector
  uint32_t cpus = 0;
  std::vector<uint32_t> gpus;
  uint64_t mem_mb = 0;
};

// A job already holding resources; its shares are part of the snapshot's
// used resources (not of the free ones) and return at expected_end_ms.
struct RunningJob {
  uint64_t id = 0;
  std::vector<NodeShare> shares;
  int64_t expected_end_ms = 0;
  bool exclusive = false;  // holds its nodes whole
};

struct SchedulerOptions {
  bool backfill = true;
  bool topology_aware = true;  // false: first fit in node order
  int64_t now_ms = 0;
};

struct JobStart {
  uint64_t job_id = 0;
  std::vector<NodeShare> shares;  // in rank order: node 0 holds rank 0
  uint32_t leaf_switches = 0;     // distinct leaves the gang spans
  bool backfilled = false;        // started ahead of a reserved job
};

struct JobWait {
  uint64_t job_id = 0;
  // Slurm reason word: Resources, Priority, Topology (--switches not yet
  // satisfiable), PartitionNodeLimit (can never fit).
  std::string reason;
  std::string detail;             // one sentence for humans
  int64_t expected_start_ms = 0;  // set for a reserved job; 0: unknown
};

// Nodes held back for a blocked job (EASY backfill).
struct Reservation {
  uint64_t job_id = 0;
  int64_t start_ms = 0;
  std::vector<std::size_t> node_indices;
};

struct ScheduleResult {
  std::vector<JobStart> starts;
  std::vector<JobWait> waits;
  std::vector<Reservation> reservations;  // at most one per partition
};

// `queue` is in priority order (first is most important; see
// daemon/priority.h OrderQueue).
ScheduleResult Schedule(const std::vector<NodeSnapshot>& nodes,
                        const std::vector<PendingJob>& queue,
                        const std::vector<RunningJob>& running,
                        const SchedulerOptions& options);

// Strict priority order with no knowledge of running jobs: the old policy.
inline ScheduleResult Schedule(const std::vector<NodeSnapshot>& nodes,
                               const std::vector<PendingJob>& queue) {
  SchedulerOptions options;
  options.backfill = false;
  return Schedule(nodes, queue, {}, options);
}

}  // namespace gantry
