// The scheduler core: a pure function from a cluster snapshot, the ordered
// pending queue and the running jobs to decisions (start these jobs on these
// nodes with these GPUs; why the others wait; what is reserved for whom). No
// I/O, clock, threads or RPC types, so the controller, tests and the trace
// simulator all run the same code. Thread-safe (no state).
//
// Placement is gang (all-or-nothing) and topology-aware: among feasible
// placements the lowest switch level that can hold the job, then the fewest
// leaf switches, then the tightest fit (fullest leaves that still fit, to
// keep whole leaves free for big jobs). A one-node job shares no switch and
// is placed by what it leaves free instead (single_node_fit.h). On each
// node GPUs are chosen by the job's shape (gpu_choice.h): spread over
// distinct HCAs for a multi-node job, which pairs every rank's GPU with its
// own NIC; packed close together for a one-node job.
// No job spans parts of the fabric that no switch joins, and nodes missing
// from an imported tree are used last, never beside listed ones
// (fabric_parts.h has the rules).
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
// A job that can never fit on its partition's nodes (nor within one part of
// the fabric) does not block anyone and waits with reason
// "PartitionNodeLimit".
//
// Node restrictions (--nodelist, --exclude, --constraint) narrow the nodes a
// job may use. With a matching-OR constraint ([a|b]) each choice is tried
// in turn, all nodes on the same one. Listed nodes come first in the shares;
// when the job asks for more nodes than it lists, the rest are placed as
// any job's would be.
//
// Hot spares: nodes marked hot_spare take only restarts of failed jobs, and
// a restart takes spares before other nodes, so a failed gang comes back
// fast even on a full cluster; but only when the spares alone give it a
// switch span (level, then leaves) no wider than all its free nodes would.
// Otherwise it is placed as a fresh job would be, spares first within the
// leaves chosen.
#pragma once

#include <vector>

#include "daemon/scheduler/scheduler_types.h"

namespace gantry {

// `queue` is in priority order (first is most important; see
// daemon/scheduler/priority.h OrderQueue).
ScheduleResult Schedule(const std::vector<NodeSnapshot>& nodes,
                        const std::vector<PendingJob>& queue,
                        const std::vector<RunningJob>& running,
                        const SchedulerOptions& options);

// The tests behind PartitionNodeLimit, for judging a job before it is
// queued (gantryd refuses a job at submission that no node could ever hold).
// Whether `node` may run the job at all: its partition, and hot spares
// only for restarts.
bool NodeServesJob(const NodeSnapshot& node, const PendingJob& job);
// Whether it is big enough for one node's share of the job: total (not
// free) CPUs, GPUs and memory, and NodeServesJob.
bool NodeCouldEverHold(const NodeSnapshot& node, const PendingJob& job);
// Whether the node has GPUs of the job's --gres=gpu:TYPE (`type` in lower
// case): one of that type, a model having it as whole words, or a feature
// of that name.
bool NodeHasGpuType(const NodeSnapshot& node, const std::string& type);
// CPUs the job takes on each of its nodes.
uint32_t CpusPerNode(const PendingJob& job);

// Strict priority order with no knowledge of running jobs: the old policy.
inline ScheduleResult Schedule(const std::vector<NodeSnapshot>& nodes,
                               const std::vector<PendingJob>& queue) {
  SchedulerOptions options;
  options.backfill = false;
  return Schedule(nodes, queue, {}, options);
}

}  // namespace gantry
