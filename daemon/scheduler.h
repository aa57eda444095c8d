// The scheduler core: a pure function from a cluster snapshot and the ordered
// pending queue to decisions (start these jobs on these nodes; why the others
// wait). No I/O, clock, threads or RPC types, so the controller, tests and a
// trace simulator all run the same code. Thread-safe (no state).
//
// Policy today: strict FIFO within a partition with gang (all-or-nothing)
// first-fit placement. A job that cannot start now blocks the jobs behind it
// in its partition (they wait with reason "Priority"), so big jobs do not
// starve; a job that can never fit on the partition's nodes does not block
// anyone and waits with reason "PartitionNodeLimit".
//
// Hot spares: nodes marked hot_spare take only restarts of failed jobs, and
// a restart takes spares before other nodes, so a failed gang comes back
// fast even on a full cluster.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
};

struct NodeShare {
  std::size_t node_index = 0;  // into the snapshot's node vector
  uint32_t cpus = 0;
  std::vector<uint32_t> gpus;
  uint64_t mem_mb = 0;
};

struct JobStart {
  uint64_t job_id = 0;
  std::vector<NodeShare> shares;  // in rank order: node 0 holds rank 0
};

struct JobWait {
  uint64_t job_id = 0;
  std::string reason;  // Slurm reason word
  std::string detail;  // one sentence for humans
};

struct ScheduleResult {
  std::vector<JobStart> starts;
  std::vector<JobWait> waits;
};

// `queue` is in priority order (first is most important).
ScheduleResult Schedule(const std::vector<NodeSnapshot>& nodes,
                        const std::vector<PendingJob>& queue);

}  // namespace gantry
