// The recovery policies' defaults (where each figure comes from), the
// cluster a policy runs on, the check of a goodput run's settings, and the
// entry point (the engine is goodput_engine.h).
#include "daemon/simulator/goodput_sim.h"

#include <algorithm>
#include <cmath>

#include "daemon/simulator/goodput_engine.h"

namespace gantry::sim {

std::vector<RecoveryPolicy> StandardRecoveryPolicies(uint32_t spares) {
  // Gantry: --node-timeout 3 s (its default) to notice a lost node; about
  // 3 s from a node's death to every rank running again (docs/user-guide.md,
  // "When things fail"). Pre-flight: 10 s per attempt (the target for
  // 64 nodes), catching 90% of bad nodes (an assumption).
  RecoveryPolicy gantry{.name = "gantry",
                        .kind = RecoveryKind::kGantry,
                        .detect_s = 3,
                        .launch_s = 3,
                        .spares = spares,
                        .shrink = true,
                        .preflight_s = 10,
                        .preflight_catch = 0.9};
  RecoveryPolicy jit = gantry;
  jit.name = "gantry+jit";
  jit.jit_checkpoint = true;
  jit.jit_save_s = 60;  // write the state from the surviving replicas
  jit.jit_lost_s = 10;  // the step in flight
  // Gantry with in-memory snapshots held by peers (the costs are the
  // GoodputConfig memory_* fields, from the flags): no just-in-time save,
  // periodic checkpoints only.
  RecoveryPolicy memory = gantry;
  memory.name = "gantry+memory";
  memory.memory_checkpoints = true;
  // Slurm: a dead node is noticed after SlurmdTimeout (300 s by default);
  // an operator resumes nodes and requeues the job after 30 min (assumed);
  // 10 s to launch (assumed).
  RecoveryPolicy slurm{.name = "slurm",
                       .kind = RecoveryKind::kSlurm,
                       .detect_s = 300,
                       .launch_s = 10,
                       .spares = 0,
                       .operator_delay_s = 1800};
  // Kueue: a node is NotReady after the node monitor's grace period (40 s);
  // pods rescheduled and started in 30 s (assumed); an evicted workload is
  // re-admitted after waitForPodsReady's requeuing backoff base, 60 s.
  RecoveryPolicy kueue{.name = "kueue",
                       .kind = RecoveryKind::kKueue,
                       .detect_s = 40,
                       .launch_s = 30,
                       .spares = spares,
                       .requeue_backoff_s = 60};
  return {gantry, jit, memory, slurm, kueue};
}

uint32_t MemoryPeerOf(const ClusterShape& shape, uint32_t node) {
  const uint32_t leaves = shape.Leaves();
  if (leaves <= 1) return shape.nodes > 1 ? (node + 1) % shape.nodes : node;
  const uint32_t leaf = (LeafOf(shape, node) + 1) % leaves;
  const uint32_t first = leaf * shape.nodes_per_leaf;
  const uint32_t last = std::min(shape.nodes, first + shape.nodes_per_leaf) - 1;
  return std::min(first + node % shape.nodes_per_leaf, last);
}

ClusterShape ClusterWithSpares(const ClusterShape& shape,
                               const RecoveryPolicy& policy) {
  ClusterShape with = shape;
  with.nodes += policy.spares;
  return with;
}

absl::Status ValidateGoodputConfig(const GoodputConfig& c,
                                   const RecoveryPolicy& p) {
  if (absl::Status status = ValidateShape(c.cluster); !status.ok()) {
    return status;
  }
  auto nonneg = [](double v) { return v >= 0 && std::isfinite(v); };
  if (!(c.checkpoint_interval_s > 0) ||
      !std::isfinite(c.checkpoint_interval_s)) {
    return absl::InvalidArgumentError("--checkpoint-interval must be > 0");
  }
  for (double v :
       {c.checkpoint_write_s, c.init_s, c.load_s, c.hang_detect_s, c.repair_s,
        c.bad_fail_after_s, c.time_limit_factor, p.detect_s, p.launch_s,
        p.operator_delay_s, p.requeue_backoff_s, p.preflight_s, p.jit_save_s,
        p.jit_lost_s}) {
    if (!nonneg(v)) {
      return absl::InvalidArgumentError(
          "times and factors must be finite and >= 0");
    }
  }
  if (!(c.memory_interval_s > 0) || !std::isfinite(c.memory_interval_s)) {
    return absl::InvalidArgumentError("--memory-interval must be > 0");
  }
  for (double v : {c.memory_write_s, c.memory_replicate_s, c.memory_restore_s,
                   c.auto_memory_interval_node_rate_per_hour}) {
    if (!nonneg(v)) {
      return absl::InvalidArgumentError(
          "--memory-write, --memory-replicate and --memory-restore must be "
          "finite and >= 0");
    }
  }
  for (double share :
       {c.bad_after_repair, c.min_nodes_fraction, p.preflight_catch}) {
    if (!(share >= 0 && share <= 1)) {
      return absl::InvalidArgumentError(
          "shares (--bad-after-repair, --min-nodes-fraction, "
          "--preflight-catch) must be in [0, 1]");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<GoodputReport> SimulateGoodput(
    const std::vector<GoodputJob>& jobs, const GoodputConfig& config,
    const RecoveryPolicy& policy, FailureSource& failures) {
  if (absl::Status status = ValidateGoodputConfig(config, policy);
      !status.ok()) {
    return status;
  }
  goodput_engine::Engine engine(jobs, config, policy, failures);
  return engine.Run();
}

}  // namespace gantry::sim
