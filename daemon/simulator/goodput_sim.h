// gantry-sim's goodput engine: runs training jobs on a simulated cluster in
// virtual time while failures from a FailureSource hit its nodes, recovers
// them under one of three recovery policies, and splits every job's wall
// time into productive work and what failures cost (effective training time
// ratio, ETTR = productive / wall). Placement is the real scheduler core
// (daemon/scheduler/scheduler.h: priority order, EASY backfill,
// topology-aware, hot spares first for restarts). Pure: no clock, I/O or
// threads; thread-compatible (each call owns its state).
//
// A job's attempt: placed at t0; launch (the resource manager's restart,
// requeue to ranks started), pre-flight (Gantry only), init (processes,
// NCCL), and on a restart the checkpoint load; then training, which stops
// every checkpoint_interval of training for checkpoint_write. A failure
// throws away the work since the last finished checkpoint ("lost"), unless
// the policy saves at failure time (just-in-time checkpointing, below).
//
// Recovery policies:
//  gantry  what gantryd does: a failed node is drained; the job restarts at
//          once (after detection: --node-timeout for a lost node) as one
//          restart however many of its nodes failed together (the restart
//          waits until the failure is noticed, and nodes failing meanwhile
//          are left out), re-placed by the scheduler with hot spares first
//          and the fewest leaf switches. With shrink on, a job with a node
//          range restarts on fewer nodes (not below its minimum) when too few
//          are free, and gets its full size back at its next restart (or
//          at once with grow_at_once, when the job can take that).
//          With pre-flight on, each attempt checks its nodes before ranks
//          start: a bad node is caught with probability preflight_catch,
//          drained, and the job re-placed without a failure.
//  slurm   Slurm without spares: the job is requeued after an operator
//          looks at it (operator_delay) and runs again when enough nodes are
//          up: a failed node only after its repair.
//  kueue   Kueue hot swap: one failed node is swapped for a free spare while
//          the job restarts; a second failure while one is being replaced
//          (several nodes at once, or another failure before training
//          resumes), or no free spare, evicts the whole job: it goes to the
//          back of the queue after requeue_backoff.
// Just-in-time checkpointing (any policy, off by default): at a failure the
// surviving data-parallel replicas write the current state (jit_save, after
// detection), so only jit_lost of work is thrown away. No resource manager
// does this for the job; the training code must.
//  gantry+memory  gantry with in-memory checkpoints held by peers (Gemini,
//          ByteRobust): every memory interval of training each rank copies
//          its state to host memory (memory_write, blocking), and the
//          node's agent replicates it in the background to the node's peer
//          under another leaf switch (memory_replicate). A failure throws
//          away the work since the newest snapshot replicated before it;
//          the restart restores it from memory (memory_restore instead of
//          load) if every rank's copy survives on its node or its peer at
//          the restart, else it falls back to the newest persistent
//          checkpoint (load), and the work since then is lost too.
//          Persistent checkpoints go on at checkpoint_interval, at snapshot
//          boundaries (goodput_attempt.h).
//
// Failed nodes: a hardware fault takes the node out for repair (whether it
// runs a job, idles or is a spare); software faults and hangs leave it up.
// A repaired node comes back still bad with probability bad_after_repair;
// a bad node that starts ranks unnoticed fails bad_fail_after later.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/simulator/cluster_model.h"
#include "daemon/simulator/failure_model.h"
#include "daemon/simulator/goodput_attempt.h"

namespace gantry::sim {

enum class RecoveryKind { kGantry, kSlurm, kKueue };

struct RecoveryPolicy {
  std::string name;
  RecoveryKind kind = RecoveryKind::kGantry;
  double detect_s = 3;           // a lost node noticed
  double launch_s = 3;           // restart decided to ranks started
  uint32_t spares = 0;           // hot spares added to the cluster
  double operator_delay_s = 0;   // slurm: failure noticed to requeue
  double requeue_backoff_s = 0;  // kueue: eviction to re-admission
  bool shrink = false;           // gantry: jobs with a range shrink
  // gantry: a shrunk job that can take it (an elastic rendezvous) grows
  // back as soon as its nodes are free, by a planned restart: a checkpoint
  // written, then init and load on the full size. Off: at its next restart.
  bool grow_at_once = false;
  double preflight_s = 0;      // gantry: per attempt, 0: off
  double preflight_catch = 0;  // share of bad nodes it catches
  bool jit_checkpoint = false;
  double jit_save_s = 0;
  double jit_lost_s = 0;
  // The job keeps in-memory snapshots replicated to peers (the
  // GoodputConfig memory_* costs). A policy rather than a switch on
  // gantry: the job's training code has to write the snapshots, as for
  // just-in-time checkpointing, and one run compares both on the same
  // failures.
  bool memory_checkpoints = false;
};

// Node `node`'s peer for in-memory snapshots in `shape`: the node at the
// same position under the next leaf switch (the last leaf's go to the
// first; a short last leaf's position clamped), so a node and its peer
// never share a leaf. A one-leaf cluster has no other failure domain: the
// next node.
uint32_t MemoryPeerOf(const ClusterShape& shape, uint32_t node);

// gantry, gantry+jit, gantry+memory, slurm, kueue with defaults (see
// goodput_sim.cc).
std::vector<RecoveryPolicy> StandardRecoveryPolicies(uint32_t spares);

struct GoodputConfig {
  ClusterShape cluster;  // without the policy's spares
  double checkpoint_interval_s = 1800;
  // > 0 (--checkpoint-interval auto): each attempt checkpoints at the
  // Young/Daly optimum for its node count at this failure rate per
  // node-hour, as Gantry hands it to a job (GANTRY_CHECKPOINT_INTERVAL),
  // instead of every checkpoint_interval_s.
  double auto_interval_node_rate_per_hour = 0;
  double checkpoint_write_s = 10;
  double init_s = 120;  // processes, NCCL init: every attempt
  // Whether the first attempt pays init_s too. A trace's durations already
  // hold their jobs' own start-up, so trace runs leave it out.
  bool init_first_attempt = true;
  double load_s = 60;  // checkpoint load: every restart
  // In-memory snapshots (policies with memory_checkpoints): training
  // seconds between two, or with auto_memory_interval_node_rate_per_hour >
  // 0 the Young/Daly optimum for the attempt's node count at that rate and
  // memory_write_s (replication adds a constant to the loss per failure,
  // so it does not move the optimum).
  double memory_interval_s = 300;
  double auto_memory_interval_node_rate_per_hour = 0;
  double memory_write_s = 1;       // GPU to host memory; training waits
  double memory_replicate_s = 10;  // to the peer, in the background
  double memory_restore_s = 10;    // replaces load_s when restoring one
  double hang_detect_s = 600;      // a hang noticed (the job's watchdog)
  double repair_s = 4 * 3600;      // a hardware fault to the node back
  double bad_after_repair = 0;
  double bad_fail_after_s = 600;
  // Nodes bad from the start (as if just back from a repair that did not
  // fix them).
  std::vector<uint32_t> bad_nodes;
  // Multi-node jobs get the node range [ceil(nodes x this), nodes]; 0: none.
  double min_nodes_fraction = 0;
  double time_limit_factor = 1.5;  // backfill's estimate of run time
  uint64_t seed = 1;               // for bad-after-repair draws
};

struct GoodputJob {
  JobId id;
  int64_t submit_ms = 0;
  int64_t work_ms = 0;  // training time at full size without failures
  uint32_t gpus = 0;
  std::string user;
};

struct GoodputJobOutcome {
  JobId id;
  uint32_t nodes = 0;
  uint32_t gpus = 0;
  int64_t first_start_ms = -1;
  int64_t end_ms = -1;  // -1: did not finish
  int failures = 0;     // failure events that hit the job
  int restarts = 0;
  int evictions = 0;  // kueue
  int preflight_catches = 0;
  int shrunk_attempts = 0;
  int grows = 0;  // planned restarts to grow back (grow_at_once)
  // Restarts after a failure (memory_checkpoints): restored from peers'
  // memory, or from the file system (a rank's snapshot lost, or none
  // replicated newer than the persistent checkpoint).
  int memory_restores = 0;
  int memory_fallbacks = 0;
  TimeSplit split;
};

struct GoodputReport {
  std::string policy;
  int jobs = 0;
  int jobs_finished = 0;
  int jobs_never_fit = 0;
  int failure_events = 0;  // all drawn, on any node, until the last job ended
  int job_failures = 0;    // of those, the ones that hit a job (per job)
  int restarts = 0;
  int evictions = 0;
  int preflight_catches = 0;
  int shrunk_attempts = 0;
  int grows = 0;
  int memory_restores = 0;
  int memory_fallbacks = 0;
  // GPU-weighted sums over finished jobs, seconds x GPUs.
  TimeSplit split;
  double Ettr() const { return split.Ettr(); }
  std::vector<GoodputJobOutcome> outcomes;
};

absl::Status ValidateGoodputConfig(const GoodputConfig& config,
                                   const RecoveryPolicy& policy);

// Runs `jobs` under `policy`; failures from `failures` (node indices are
// those of config.cluster plus the policy's spares, which come last).
// Stops 100 times the longest job's work (at least a year) after the last
// submission; jobs not done by then are reported unfinished.
absl::StatusOr<GoodputReport> SimulateGoodput(
    const std::vector<GoodputJob>& jobs, const GoodputConfig& config,
    const RecoveryPolicy& policy, FailureSource& failures);

// The cluster a policy runs on: config.cluster plus its spares.
ClusterShape ClusterWithSpares(const ClusterShape& shape,
                               const RecoveryPolicy& policy);

}  // namespace gantry::sim
