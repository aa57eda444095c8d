// The trace simulator's engine: replays trace jobs on a simulated cluster in
// virtual time, calling the real scheduler core (daemon/scheduler/scheduler.h)
// as the controller would, and measures what each queue policy achieves. Pure:
// no clock, I/O or threads; thread-compatible (each call owns its state).
//
// Event loop: two kinds of event, a job's submission (from the trace) and a
// job's completion (start + its run time in the model). All events at one
// timestamp are applied together, then Schedule runs once with the free
// resources, the pending queue and the running jobs (expected end = start +
// time limit), unless no GPU is free. Every start it returns is applied at
// that timestamp.
//
// Locality cost: a multi-node job placed on more leaf switches than its node
// count needs (ceil(nodes / nodes_per_leaf)) runs slower:
//   run time = trace duration * (1 + spread_slowdown * (leaves_used -
//   leaves_needed)).
// Time limits (for backfill) are trace duration * time_limit_factor; a job
// that runs past its limit (only possible when slowed down) is not killed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/scheduler/priority.h"
#include "daemon/simulator/cluster_model.h"
#include "daemon/simulator/dataset_model.h"
#include "daemon/simulator/trace_reader.h"

namespace gantry::sim {

struct SimPolicy {
  std::string name;
  bool backfill = true;
  bool topology_aware = true;
  bool priority_order = true;  // false: FIFO (submit order)
};

// gantry (priority order + EASY backfill + topology-aware), fifo (submit
// order, no backfill, first fit), backfill (priority order + EASY backfill,
// first fit): the last differs from gantry only in placement.
std::vector<SimPolicy> StandardPolicies();

struct SimConfig {
  ClusterShape cluster;
  double spread_slowdown = 0.1;
  double time_limit_factor = 1.5;
  PriorityWeights weights;
  // Datasets for the jobs and caches on the nodes (dataset_model.h); none:
  // jobs read nothing. With cache_aware the scheduler sees both (placement
  // by cache, dataset_locality); without, the caches fill all the same and
  // serve what lands on their nodes by chance.
  std::optional<DatasetModelConfig> datasets;
  bool cache_aware = false;
  DatasetLocality dataset_locality = DatasetLocality::kTopology;
};

struct JobOutcome {
  JobId id;
  int64_t submit_ms = 0;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  uint32_t nodes = 0;
  uint32_t gpus_held = 0;  // nodes * GPUs per node as allocated
  // The job's work at full speed: the GPUs it asked for times the trace's
  // duration (no spread slowdown).
  double useful_gpu_ms = 0;
  uint32_t leaves_used = 0;
  uint32_t leaves_needed = 0;
};

struct PolicyReport {
  std::string policy;
  int jobs_run = 0;
  int jobs_never_fit = 0;  // bigger than the cluster; not run
  // Held GPU-time / (all GPUs * busy period); busy period = first submit to
  // last completion.
  double utilization = 0;
  // Work at full speed / (all GPUs * busy period): what the GPUs did,
  // where `utilization` also counts the time a spread-out gang ran slower
  // (a worse placement holds GPUs longer and looks busier).
  double useful_utilization = 0;
  double busy_period_s = 0;
  double delay_mean_s = 0, delay_p50_s = 0, delay_p99_s = 0;
  double jct_mean_s = 0, jct_p99_s = 0;  // completion - submit
  int multi_node_jobs = 0;
  double fewest_leaves_share = 0;  // of multi-node jobs; 0 when none
  double mean_leaves = 0;          // per multi-node job; 0 when none
  double multi_delay_mean_s = 0;   // of multi-node jobs; 0 when none
  int backfilled_jobs = 0;
  // With datasets: the bytes the jobs' nodes read (each node its job's
  // dataset once, at start), and those read from shared storage (misses).
  uint64_t dataset_bytes = 0;
  uint64_t shared_bytes = 0;
  int64_t schedule_calls = 0;
  double wall_s = 0;                 // set by the caller that timed the run
  double cpu_s = 0;                  // likewise, process CPU time
  std::vector<JobOutcome> outcomes;  // in completion order
};

// Runs `jobs` (any order; submit_ms in any epoch) under `policy`.
// INVALID_ARGUMENT for a bad cluster shape or negative factors.
absl::StatusOr<PolicyReport> Simulate(const std::vector<TraceJob>& jobs,
                                      const SimConfig& config,
                                      const SimPolicy& policy);

// The jobs submitted in [first + start_s, first + start_s + span_s) (span_s
// <= 0: no end), the first `limit` of them in submit order (limit 0: all),
// sorted by submit time then id.
std::vector<TraceJob> SelectWindow(std::vector<TraceJob> jobs, double start_s,
                                   double span_s, std::size_t limit);

}  // namespace gantry::sim
