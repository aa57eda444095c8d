#include "daemon/simulator/goodput_report.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gantry::sim {
namespace {

double Share(double part, double wall) { return wall > 0 ? part / wall : 0; }

nlohmann::json SplitJson(const TimeSplit& s) {
  const double wall = s.Wall();
  nlohmann::json shares = nlohmann::json::object();
  for (size_t i = 0; i < kGoodputKinds; ++i) {
    const auto kind = static_cast<GoodputKind>(i);
    shares[std::string(GoodputKindName(kind))] = Share(s[kind], wall);
  }
  return shares;
}

}  // namespace

std::string FormatGoodputTable(const GoodputRunInfo& info,
                               const std::vector<GoodputReport>& reports) {
  const GoodputConfig& c = info.config;
  std::string out = absl::StrFormat(
      "%s\ncluster: %u nodes x %u GPUs, %u nodes/leaf (+ each policy's "
      "spares)\nfailures: %.3g per node-hour, %.3g whole-leaf per "
      "leaf-hour, %zu kinds, seed %u\ncosts: checkpoint every %s "
      "(write %.0f s), init %.0f s, load %.0f s, hang noticed after %.0f s, "
      "repair %.0f s, bad after repair %.3g\n",
      info.scenario, c.cluster.nodes, c.cluster.gpus_per_node,
      c.cluster.nodes_per_leaf, info.model.node_rate_per_hour,
      info.model.leaf_rate_per_hour, info.model.mix.size(), info.model.seed,
      c.auto_interval_node_rate_per_hour > 0
          ? std::string("Young/Daly interval (per attempt's nodes)")
          : absl::StrFormat("%.0f s", c.checkpoint_interval_s),
      c.checkpoint_write_s, c.init_s, c.load_s, c.hang_detect_s, c.repair_s,
      c.bad_after_repair);
  const bool memory =
      std::any_of(info.policies.begin(), info.policies.end(),
                  [](const RecoveryPolicy& p) { return p.memory_checkpoints; });
  if (memory) {
    absl::StrAppend(
        &out, absl::StrFormat(
                  "in-memory snapshots (gantry+memory): every %s (write "
                  "%.3g s), replicated to the peer in %.3g s, restored in "
                  "%.3g s\n",
                  c.auto_memory_interval_node_rate_per_hour > 0
                      ? std::string("Young/Daly interval (per attempt's nodes)")
                      : absl::StrFormat("%.0f s", c.memory_interval_s),
                  c.memory_write_s, c.memory_replicate_s, c.memory_restore_s));
  }
  out += "\n";
  absl::StrAppendFormat(
      &out,
      "%-13s %6s | %5s %5s %5s %5s %5s %5s %5s %5s | %5s %5s %5s %5s %5s "
      "%5s %5s %5s %5s %9s\n",
      "POLICY", "ETTR", "DEGR", "CKPT", "LOST", "DETCT", "RECOV", "PREFL",
      "QUEUE", "START", "FAILS", "RESTR", "MEMR", "FALLB", "EVICT", "CATCH",
      "SHRNK", "GROW", "DONE", "WALL_D");
  for (const GoodputReport& r : reports) {
    const TimeSplit& s = r.split;
    const double wall = s.Wall();
    const double gpus_done = [&] {
      double g = 0;
      for (const GoodputJobOutcome& o : r.outcomes) {
        if (o.end_ms >= 0) g += o.gpus;
      }
      return g;
    }();
    absl::StrAppendFormat(
        &out,
        "%-13s %6.4f | %5.4f %5.4f %5.4f %5.4f %5.4f %5.4f %5.4f %5.4f | %5d "
        "%5d %5d %5d %5d %5d %5d %5d %5d %9.2f\n",
        r.policy, r.Ettr(), Share(s[GoodputKind::kDegraded], wall),
        Share(s[GoodputKind::kCheckpoint], wall),
        Share(s[GoodputKind::kLost], wall),
        Share(s[GoodputKind::kDetecting], wall),
        Share(s[GoodputKind::kRecovering], wall),
        Share(s[GoodputKind::kPreflight], wall),
        Share(s[GoodputKind::kQueued], wall),
        Share(s[GoodputKind::kStarting], wall), r.job_failures, r.restarts,
        r.memory_restores, r.memory_fallbacks, r.evictions, r.preflight_catches,
        r.shrunk_attempts, r.grows, r.jobs_finished,
        gpus_done > 0 ? wall / gpus_done / 86400 : 0);
  }
  absl::StrAppend(
      &out,
      "\nETTR: productive / wall, GPU-weighted over finished jobs, wall from "
      "each job's first start to its end. The next columns are shares of "
      "the same wall time: DEGR running shrunk, CKPT checkpoint writes, LOST "
      "work thrown away, DETCT failure to noticed, RECOV noticed to training "
      "again, PREFL pre-flight, QUEUE waiting for nodes or an operator, START "
      "the first launch and init.\nFAILS: failures that hit a job; RESTR "
      "restarts; MEMR of those, restored from peers' memory, FALLB from the "
      "file system instead (gantry+memory); EVICT Kueue evictions; CATCH bad "
      "nodes pre-flight caught; "
      "SHRNK attempts on fewer nodes; GROW planned restarts to grow back; DONE "
      "jobs finished; WALL_D mean wall "
      "time per finished job (GPU-weighted), days.\n");
  for (const GoodputReport& r : reports) {
    const int unfinished = r.jobs - r.jobs_finished;
    if (unfinished > 0) {
      absl::StrAppend(&out, r.policy, ": ", unfinished,
                      " job(s) did not finish within the run (100 times the "
                      "longest job's work after the last submission); ETTR "
                      "is over the finished ones.\n");
    }
  }
  if (!reports.empty() && reports.front().jobs_never_fit > 0) {
    absl::StrAppend(&out, reports.front().jobs_never_fit,
                    " job(s) need more GPUs than the cluster has and were "
                    "not run.\n");
  }
  return out;
}

std::string FormatGoodputJson(const GoodputRunInfo& info,
                              const std::vector<GoodputReport>& reports) {
  const GoodputConfig& c = info.config;
  nlohmann::json doc;
  doc["scenario"] = info.scenario;
  doc["cluster"] = {{"nodes", c.cluster.nodes},
                    {"gpus_per_node", c.cluster.gpus_per_node},
                    {"nodes_per_leaf", c.cluster.nodes_per_leaf}};
  doc["failure_model"] = {{"node_rate_per_hour", info.model.node_rate_per_hour},
                          {"leaf_rate_per_hour", info.model.leaf_rate_per_hour},
                          {"seed", info.model.seed}};
  doc["costs"] = {
      {"checkpoint_interval_s", c.auto_interval_node_rate_per_hour > 0
                                    ? nlohmann::json("auto")
                                    : nlohmann::json(c.checkpoint_interval_s)},
      {"checkpoint_write_s", c.checkpoint_write_s},
      {"memory_interval_s", c.auto_memory_interval_node_rate_per_hour > 0
                                ? nlohmann::json("auto")
                                : nlohmann::json(c.memory_interval_s)},
      {"memory_write_s", c.memory_write_s},
      {"memory_replicate_s", c.memory_replicate_s},
      {"memory_restore_s", c.memory_restore_s},
      {"init_s", c.init_s},
      {"load_s", c.load_s},
      {"hang_detect_s", c.hang_detect_s},
      {"repair_s", c.repair_s},
      {"bad_after_repair", c.bad_after_repair},
      {"min_nodes_fraction", c.min_nodes_fraction}};
  nlohmann::json policies = nlohmann::json::array();
  for (std::size_t i = 0; i < reports.size(); ++i) {
    const GoodputReport& r = reports[i];
    nlohmann::json row = {{"policy", r.policy},
                          {"ettr", r.Ettr()},
                          {"shares", SplitJson(r.split)},
                          {"jobs", r.jobs},
                          {"jobs_finished", r.jobs_finished},
                          {"jobs_never_fit", r.jobs_never_fit},
                          {"failure_events", r.failure_events},
                          {"job_failures", r.job_failures},
                          {"restarts", r.restarts},
                          {"evictions", r.evictions},
                          {"preflight_catches", r.preflight_catches},
                          {"shrunk_attempts", r.shrunk_attempts},
                          {"grows", r.grows},
                          {"memory_restores", r.memory_restores},
                          {"memory_fallbacks", r.memory_fallbacks}};
    if (i < info.policies.size()) {
      const RecoveryPolicy& p = info.policies[i];
      row["parameters"] = {{"detect_s", p.detect_s},
                           {"launch_s", p.launch_s},
                           {"spares", p.spares},
                           {"operator_delay_s", p.operator_delay_s},
                           {"requeue_backoff_s", p.requeue_backoff_s},
                           {"shrink", p.shrink},
                           {"grow_at_once", p.grow_at_once},
                           {"preflight_s", p.preflight_s},
                           {"preflight_catch", p.preflight_catch},
                           {"jit_checkpoint", p.jit_checkpoint},
                           {"jit_save_s", p.jit_save_s},
                           {"jit_lost_s", p.jit_lost_s},
                           {"memory_checkpoints", p.memory_checkpoints}};
    }
    policies.push_back(std::move(row));
  }
  doc["policies"] = std::move(policies);
  return doc.dump(2) + "\n";
}

}  // namespace gantry::sim
