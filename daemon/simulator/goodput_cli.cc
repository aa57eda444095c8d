#include "daemon/simulator/goodput_cli.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "daemon/simulator/cli_failure.h"
#include "daemon/simulator/goodput_report.h"
#include "daemon/simulator/simulation.h"
#include "daemon/simulator/trace_reader.h"
#include "daemon/simulator/trace_window_flags.h"

namespace gantry::sim {
namespace {

constexpr char kGoodputDescription[] =
    R"(Inject failures from a model into training jobs and report the
effective training time ratio (ETTR = productive time / wall time) of five
recovery policies on the same failures:
  gantry      hot spares (--spares), a lost node noticed in 3 s, back in
              3 s, one restart for nodes failing together, re-placed on
              the fewest leaf switches; pre-flight before ranks (--preflight
              s, catching --preflight-catch of bad nodes); a job with a node
              range (--min-nodes-fraction) shrinks when no node is free,
              back to full size at its next restart (--grow-at-once: as
              soon as nodes are free)
  gantry+jit  the same, with the job saving its state from the surviving
              replicas at each failure (just-in-time checkpointing: --jit-save
              s to write, --jit-lost s of work lost); the training code has
              to do this, no resource manager does it for the job
  gantry+memory  gantry with in-memory checkpoints held by peers: every
              --memory-interval of training each rank copies its state to
              host memory (--memory-write s, training waits), and its node
              replicates it to a peer node under another leaf switch in the
              background (--memory-replicate s; a snapshot protects only
              once replicated). A restart restores the newest replicated
              snapshot from memory (--memory-restore s instead of --load)
              unless a rank's node and its peer both lost it; then it falls
              back to the persistent checkpoint (--checkpoint-interval).
              Periodic checkpoints only; the training code writes the
              snapshots through Gantry's agent
  slurm       no spares: a lost node noticed after SlurmdTimeout (300 s), the
              job requeued after --operator-delay, run again when enough
              nodes are up (a failed node only after --repair)
  kueue       hot swap: one failed node replaced from a free spare (noticed
              in 40 s, pods back in 30 s); a second failure while one is
              being replaced, several at once or no free spare evicts the
              whole job to the back of the queue (--kueue-backoff)

Scenarios: without --trace, one job of --job-gpus GPUs with --job-days of
work on a cluster of exactly its nodes (plus spares); with --trace, the
trace's jobs (as gantry-sim reads them; duration = work) on --nodes nodes.
Failures: --node-rate per node-hour (default: Llama 3's 419 in 54 days on
2,048 nodes) or --gpu-rate per GPU-hour, with the kinds of the Llama 3
paper's table 5; --leaf-rate whole-leaf-switch failures per leaf-hour.
The same --seed gives the same failures to every policy. A run stops 100
times the longest job's work (at least a year) after the last submission;
jobs unfinished by then are reported and left out of ETTR.
)";

std::vector<GoodputJob> TraceJobs(const std::vector<TraceJob>& trace) {
  std::vector<GoodputJob> jobs;
  for (const TraceJob& t : trace) {
    jobs.push_back({.id = t.id,
                    .submit_ms = t.submit_ms,
                    .work_ms = std::max<int64_t>(1, t.duration_ms),
                    .gpus = std::max<uint32_t>(1, t.gpus),
                    .user = t.user});
  }
  return jobs;
}

}  // namespace

CLI::App* AddGoodputCommand(CLI::App& app, GoodputFlags& f) {
  CLI::App* cmd = app.add_subcommand(
      "goodput",
      "Inject failures into training jobs; ETTR of recovery policies");
  cmd->footer(kGoodputDescription);
  GoodputConfig& c = f.config;
  c.cluster.nodes = 0;  // 0: not given (see --nodes)
  AddTraceWindowFlags(cmd, "Job trace (CSV); none: one long job", f.trace_path,
                      f.format, f.limit, f.start_s, f.span_s);
  cmd->add_option("--job-gpus", f.job_gpus, "The long job's GPUs")
      ->capture_default_str();
  cmd->add_option("--job-days", f.job_days,
                  "The long job's work in days (without failures)")
      ->capture_default_str();
  cmd->add_option("--nodes", c.cluster.nodes,
                  "Nodes without spares (default: the long job's nodes; 64 "
                  "with --trace)");
  cmd->add_option("--gpus-per-node", c.cluster.gpus_per_node, "GPUs per node")
      ->capture_default_str();
  cmd->add_option("--nodes-per-leaf", c.cluster.nodes_per_leaf,
                  "Nodes under each leaf switch")
      ->capture_default_str();
  cmd->add_option("--leaves-per-spine", c.cluster.leaves_per_spine,
                  "Leaf switches under each spine")
      ->capture_default_str();
  cmd->add_option("--node-rate", f.model.node_rate_per_hour,
                  "Failures per node-hour")
      ->capture_default_str();
  cmd->add_option("--gpu-rate", f.gpu_rate,
                  "Failures per GPU-hour (instead of --node-rate)");
  cmd->add_option("--leaf-rate", f.model.leaf_rate_per_hour,
                  "Whole-leaf-switch failures per leaf-hour")
      ->capture_default_str();
  cmd->add_option("--seed", f.model.seed, "Seed of the failure draws")
      ->capture_default_str();
  cmd->add_option("--checkpoint-interval", f.checkpoint_interval,
                  "Training seconds between checkpoints, or auto: each "
                  "attempt at the Young/Daly optimum for its node count, "
                  "--checkpoint-write and the failure rate (as Gantry "
                  "gives jobs GANTRY_CHECKPOINT_INTERVAL)")
      ->capture_default_str();
  cmd->add_option("--checkpoint-write", c.checkpoint_write_s,
                  "Seconds training stops to write one")
      ->capture_default_str();
  cmd->add_option("--memory-interval", f.memory_interval,
                  "gantry+memory: training seconds between in-memory "
                  "snapshots, or auto: the Young/Daly optimum for the "
                  "attempt's node count, --memory-write and the failure rate")
      ->capture_default_str();
  cmd->add_option("--memory-write", c.memory_write_s,
                  "gantry+memory: seconds training stops to copy a snapshot "
                  "to host memory")
      ->capture_default_str();
  cmd->add_option("--memory-replicate", c.memory_replicate_s,
                  "gantry+memory: seconds from a snapshot written to its "
                  "copy on the peer node (in the background)")
      ->capture_default_str();
  cmd->add_option("--memory-restore", c.memory_restore_s,
                  "gantry+memory: seconds to restore a snapshot from memory "
                  "(instead of --load)")
      ->capture_default_str();
  cmd->add_option("--init", c.init_s,
                  "Seconds from ranks started to training (every attempt)")
      ->capture_default_str();
  cmd->add_option("--load", c.load_s, "Seconds to load a checkpoint (restarts)")
      ->capture_default_str();
  cmd->add_option("--hang-detect", c.hang_detect_s,
                  "Seconds before a hang is noticed (the job's watchdog)")
      ->capture_default_str();
  cmd->add_option("--repair", c.repair_s,
                  "Seconds from a hardware fault to the node back in service")
      ->capture_default_str();
  cmd->add_option("--bad-after-repair", c.bad_after_repair,
                  "Chance a repaired node comes back still bad")
      ->capture_default_str();
  cmd->add_option("--bad-fail-after", c.bad_fail_after_s,
                  "Seconds after ranks start that an unnoticed bad node fails")
      ->capture_default_str();
  cmd->add_option("--min-nodes-fraction", c.min_nodes_fraction,
                  "Multi-node jobs may shrink to this share of their nodes "
                  "(0: no node range)")
      ->capture_default_str();
  cmd->add_option("--spares", f.spares, "Hot spares (gantry, kueue)")
      ->capture_default_str();
  cmd->add_option("--operator-delay", f.operator_delay_s,
                  "slurm: seconds from a failure noticed to the job requeued")
      ->capture_default_str();
  cmd->add_option("--preflight", f.preflight_s,
                  "gantry: pre-flight seconds per attempt (0: off)")
      ->capture_default_str();
  cmd->add_option("--preflight-catch", f.preflight_catch,
                  "gantry: share of bad nodes pre-flight catches")
      ->capture_default_str();
  cmd->add_option("--jit-save", f.jit_save_s,
                  "gantry+jit: seconds to save state at a failure")
      ->capture_default_str();
  cmd->add_option("--jit-lost", f.jit_lost_s,
                  "gantry+jit: seconds of work still lost (the step in flight)")
      ->capture_default_str();
  cmd->add_option("--kueue-backoff", f.kueue_backoff_s,
                  "kueue: seconds from eviction to re-admission")
      ->capture_default_str();
  cmd->add_option("--policy", f.only,
                  "Run only these (gantry, gantry+jit, gantry+memory, slurm, "
                  "kueue)");
  cmd->add_flag("--grow-at-once", f.grow_at_once,
                "gantry: a shrunk job grows back as soon as nodes are free "
                "(it can take a new size, e.g. torchrun elastic)");
  cmd->add_flag("--json", f.json, "Print JSON instead of the table");
  return cmd;
}

int RunGoodputCommand(GoodputFlags& f) {
  GoodputConfig& config = f.config;
  if (f.gpu_rate >= 0) {
    f.model.node_rate_per_hour = f.gpu_rate * config.cluster.gpus_per_node;
  }
  if (absl::Status status = ValidateFailureModel(f.model); !status.ok()) {
    return PrintFailure(status, 2);
  }
  config.seed = f.model.seed;
  if (f.checkpoint_interval == "auto") {
    config.auto_interval_node_rate_per_hour = f.model.node_rate_per_hour;
  } else if (!absl::SimpleAtod(f.checkpoint_interval,
                               &config.checkpoint_interval_s)) {
    return PrintFailure(
        absl::InvalidArgumentError(absl::StrCat(
            "--checkpoint-interval: not a number of seconds or auto: ",
            f.checkpoint_interval)),
        2);
  }
  if (f.memory_interval == "auto") {
    config.auto_memory_interval_node_rate_per_hour = f.model.node_rate_per_hour;
  } else if (!absl::SimpleAtod(f.memory_interval, &config.memory_interval_s)) {
    return PrintFailure(absl::InvalidArgumentError(absl::StrCat(
                            "--memory-interval: not a number of seconds or "
                            "auto: ",
                            f.memory_interval)),
                        2);
  }
  std::vector<GoodputJob> jobs;
  std::string scenario;
  if (f.trace_path.empty()) {
    if (f.job_gpus == 0 || !(f.job_days > 0) || !std::isfinite(f.job_days)) {
      return PrintFailure(absl::InvalidArgumentError(
                              "--job-gpus and --job-days must be positive"),
                          2);
    }
    if (config.cluster.gpus_per_node == 0) {
      return PrintFailure(
          absl::InvalidArgumentError("--gpus-per-node must be >= 1"), 2);
    }
    const uint32_t job_nodes = GangFor(f.job_gpus, config.cluster).nodes;
    if (config.cluster.nodes == 0) config.cluster.nodes = job_nodes;
    if (job_nodes > config.cluster.nodes) {
      return PrintFailure(absl::InvalidArgumentError(absl::StrFormat(
                              "the job needs %u nodes; --nodes is %u",
                              job_nodes, config.cluster.nodes)),
                          2);
    }
    jobs.push_back(
        {.id = JobId(1),
         .submit_ms = 0,
         .work_ms = static_cast<int64_t>(std::llround(f.job_days * 86400e3)),
         .gpus = f.job_gpus,
         .user = "train"});
    scenario = absl::StrFormat("one job: %u GPUs, %.4g days of work",
                               f.job_gpus, f.job_days);
  } else {
    if (config.cluster.nodes == 0) config.cluster.nodes = 64;
    absl::StatusOr<TraceFormat> format = ParseTraceFormat(f.format);
    if (!format.ok()) return PrintFailure(format.status(), 2);
    absl::StatusOr<Trace> trace = ReadTraceFile(f.trace_path, *format);
    if (!trace.ok()) return PrintFailure(trace.status(), 1);
    std::vector<TraceJob> window =
        SelectWindow(std::move(trace->jobs), f.start_s, f.span_s, f.limit);
    if (window.empty()) {
      return PrintFailure(
          absl::InvalidArgumentError("no jobs in the chosen window"), 1);
    }
    jobs = TraceJobs(window);
    config.init_first_attempt = false;
    scenario = absl::StrFormat("trace %s (%s): %zu jobs", f.trace_path,
                               TraceFormatName(trace->format), jobs.size());
  }
  if (absl::Status status = ValidateShape(config.cluster); !status.ok()) {
    return PrintFailure(status, 2);
  }

  int64_t first_submit = INT64_MAX;
  for (const GoodputJob& job : jobs) {
    first_submit = std::min(first_submit, job.submit_ms);
  }
  GoodputRunInfo info;
  info.scenario = scenario;
  info.config = config;
  info.model = f.model;
  std::vector<GoodputReport> reports;
  for (RecoveryPolicy policy : StandardRecoveryPolicies(f.spares)) {
    if (!f.only.empty() &&
        std::find(f.only.begin(), f.only.end(), policy.name) == f.only.end()) {
      continue;
    }
    policy.operator_delay_s =
        policy.kind == RecoveryKind::kSlurm ? f.operator_delay_s : 0;
    if (policy.kind == RecoveryKind::kGantry) {
      policy.preflight_s = f.preflight_s;
      policy.preflight_catch = f.preflight_catch;
      policy.grow_at_once = f.grow_at_once;
      if (policy.jit_checkpoint) {
        policy.jit_save_s = f.jit_save_s;
        policy.jit_lost_s = f.jit_lost_s;
      }
    }
    if (policy.kind == RecoveryKind::kKueue) {
      policy.requeue_backoff_s = f.kueue_backoff_s;
    }
    // The same draws for every policy: over the cluster with the most
    // spares (a policy with fewer has no such nodes: those failures miss),
    // from the first submission on, in the trace's epoch.
    ClusterShape widest = config.cluster;
    widest.nodes += f.spares;
    ModelFailureSource failures(f.model, widest, first_submit);
    absl::StatusOr<GoodputReport> report =
        SimulateGoodput(jobs, config, policy, failures);
    if (!report.ok()) return PrintFailure(report.status(), 2);
    info.policies.push_back(policy);
    reports.push_back(std::move(*report));
  }
  if (reports.empty()) {
    return PrintFailure(
        absl::InvalidArgumentError(
            "--policy names none of gantry, gantry+jit, gantry+memory, "
            "slurm, kueue"),
        2);
  }
  const std::string out = f.json ? FormatGoodputJson(info, reports)
                                 : FormatGoodputTable(info, reports);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace gantry::sim
