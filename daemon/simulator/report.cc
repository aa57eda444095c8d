#include "daemon/simulator/report.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gantry::sim {

std::string FormatTable(const RunInfo& info,
                        const std::vector<PolicyReport>& reports) {
  const ClusterShape& c = info.config.cluster;
  std::string out = absl::StrFormat(
      "trace %s (%s): %d jobs read, %d malformed rows skipped, %d CPU-only "
      "rows and %d never-run rows left out, %d GPU shares rounded up to a "
      "GPU, %d in window\n"
      "cluster: %u nodes x %u GPUs = %u GPUs; %u nodes/leaf, %u leaves, %u "
      "spine(s)\n"
      "model: spread slowdown %.3g per extra leaf, time limit = duration x "
      "%.3g\n\n",
      info.trace_path, info.format, info.rows_read, info.skipped_rows,
      info.cpu_only_rows, info.not_run_rows, info.fractional_gpu_rows,
      info.jobs_in_window, c.nodes, c.gpus_per_node, c.TotalGpus(),
      c.nodes_per_leaf, c.Leaves(), c.Spines(), info.config.spread_slowdown,
      info.config.time_limit_factor);
  absl::StrAppendFormat(
      &out,
      "%-9s %5s %6s %6s %10s %10s %10s %10s %10s %6s %7s %6s %11s %6s %7s %7s "
      "%7s\n",
      "POLICY", "JOBS", "UTIL", "USEFUL", "DELAY_MEAN", "DELAY_P50",
      "DELAY_P99", "JCT_MEAN", "JCT_P99", "MULTI", "FEWEST", "LEAVES",
      "MULTI_DELAY", "BACKF", "CALLS", "WALL_S", "CPU_S");
  for (const PolicyReport& r : reports) {
    absl::StrAppendFormat(
        &out,
        "%-9s %5d %6.3f %6.3f %10.0f %10.0f %10.0f %10.0f %10.0f %6d %7.3f "
        "%6.2f %11.0f %6d %7d %7.2f %7.2f\n",
        r.policy, r.jobs_run, r.utilization, r.useful_utilization,
        r.delay_mean_s, r.delay_p50_s, r.delay_p99_s, r.jct_mean_s, r.jct_p99_s,
        r.multi_node_jobs, r.fewest_leaves_share, r.mean_leaves,
        r.multi_delay_mean_s, r.backfilled_jobs, r.schedule_calls, r.wall_s,
        r.cpu_s);
  }
  int never_fit = reports.empty() ? 0 : reports.front().jobs_never_fit;
  absl::StrAppend(
      &out,
      "\nUTIL: held GPU-time / (GPUs x busy period, first submit to last end), "
      "slowed-down time included; USEFUL: work at full speed (GPUs asked x "
      "trace duration) / the same. DELAY, JCT in seconds.\nWALL_S, CPU_S: wall "
      "and CPU time of each "
      "simulation.\nMULTI: multi-node jobs; FEWEST: share of them "
      "on the fewest possible leaf switches; LEAVES: mean leaf switches per "
      "multi-node job; MULTI_DELAY: their mean queueing delay.\n");
  if (never_fit > 0) {
    absl::StrAppend(&out, never_fit,
                    " job(s) need more GPUs than the cluster has and were not "
                    "run.\n");
  }
  return out;
}

std::string FormatJson(const RunInfo& info,
                       const std::vector<PolicyReport>& reports) {
  const ClusterShape& c = info.config.cluster;
  nlohmann::json doc;
  doc["trace"] = info.trace_path;
  doc["format"] = info.format;
  doc["rows_read"] = info.rows_read;
  doc["skipped_rows"] = info.skipped_rows;
  doc["cpu_only_rows"] = info.cpu_only_rows;
  doc["not_run_rows"] = info.not_run_rows;
  doc["fractional_gpu_rows"] = info.fractional_gpu_rows;
  doc["jobs_in_window"] = info.jobs_in_window;
  doc["cluster"] = {{"nodes", c.nodes},
                    {"gpus_per_node", c.gpus_per_node},
                    {"nodes_per_leaf", c.nodes_per_leaf},
                    {"leaves_per_spine", c.leaves_per_spine},
                    {"leaves", c.Leaves()},
                    {"spines", c.Spines()}};
  doc["spread_slowdown"] = info.config.spread_slowdown;
  doc["time_limit_factor"] = info.config.time_limit_factor;
  nlohmann::json policies = nlohmann::json::array();
  for (const PolicyReport& r : reports) {
    policies.push_back({{"policy", r.policy},
                        {"jobs_run", r.jobs_run},
                        {"jobs_never_fit", r.jobs_never_fit},
                        {"utilization", r.utilization},
                        {"useful_utilization", r.useful_utilization},
                        {"busy_period_s", r.busy_period_s},
                        {"delay_mean_s", r.delay_mean_s},
                        {"delay_p50_s", r.delay_p50_s},
                        {"delay_p99_s", r.delay_p99_s},
                        {"jct_mean_s", r.jct_mean_s},
                        {"jct_p99_s", r.jct_p99_s},
                        {"multi_node_jobs", r.multi_node_jobs},
                        {"fewest_leaves_share", r.fewest_leaves_share},
                        {"mean_leaves", r.mean_leaves},
                        {"multi_delay_mean_s", r.multi_delay_mean_s},
                        {"backfilled_jobs", r.backfilled_jobs},
                        {"schedule_calls", r.schedule_calls},
                        {"wall_s", r.wall_s},
                        {"cpu_s", r.cpu_s}});
  }
  doc["policies"] = std::move(policies);
  return doc.dump(2) + "\n";
}

}  // namespace gantry::sim
