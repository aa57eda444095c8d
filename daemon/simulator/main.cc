// gantry-sim: replays a GPU job trace on a described cluster in virtual time
// through the real scheduler core, once per policy, and prints one table.
// Only flags and wiring here; the engine is simulation.h.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "daemon/simulator/cache_cli.h"
#include "daemon/simulator/goodput_cli.h"
#include "daemon/simulator/report.h"
#include "daemon/simulator/simulation.h"
#include "daemon/simulator/trace_reader.h"

namespace {

constexpr char kDescription[] =
    R"(gantry-sim: run Gantry's scheduler core over a job trace in virtual time.

Runs, on the same trace and cluster, three policies through the same
Schedule() the controller calls:
  gantry    priority order (age, size, fair share) + EASY backfill +
            topology-aware placement
  fifo      submit order, no backfill, first-fit placement
  backfill  priority order + EASY backfill, first-fit placement
and prints, one row per policy: GPU utilization over the busy period
(UTIL) and the part of it that was work at full speed (USEFUL), mean/p50/p99
queueing delay (DELAY_*), mean and p99 JCT (JCT_MEAN, JCT_P99), the
multi-node jobs (MULTI), their share on the fewest possible leaf switches
(FEWEST), their mean leaf switches (LEAVES) and mean queueing delay
(MULTI_DELAY), jobs backfilled (BACKF), Schedule() calls, and the wall and
CPU seconds of the simulation. A footer under the table says the same.

Trace formats (detected from the header row; --format to insist):
  philly    timestamp,duration,num_gpus,... (philly/pollux_philly.csv):
            timestamp = submit time ("YYYY-MM-DD HH:MM:SS"), duration = run
            time (s), num_gpus = GPUs, cluster (the Philly VC) = fair-share
            user. gpu_time is ignored.
  tiresias  job_id,num_gpu,submit_time,...,duration,... (tiresias/60_job.csv):
            submit_time (s), duration (s), num_gpu; model_name = user;
            iterations and interval are ignored.
  alibaba2020  pai_task_table of Alibaba cluster-trace-gpu-v2020; the raw
            file has no header row, so give --format alibaba2020 (or put
            pai_task_table.header on top). Tasks of one job_name are one
            gang of sum(inst_num x ceil(plan_gpu / 100)) GPUs, from the
            first task's start_time to the last one's end_time (s).
  alibaba2023  openb_pod_list_*.csv of cluster-trace-gpu-v2023: submit =
            creation_time, run time = deletion_time - scheduled_time (s),
            num_gpu GPUs; a share (gpu_milli < 1000) gets a whole GPU.
  acme      trace_seren.csv / trace_kalos.csv of InternLM/AcmeTrace:
            submit_time (with its UTC offset), run time = end_time -
            start_time, gpu_num, user.
  Pollux workload-N.csv files are refused: they hold no run time (jobs
  train to a target accuracy); so are Alibaba pai_job_table files (no
  GPUs).
A job with G GPUs runs on one node when G <= --gpus-per-node, else on
ceil(G / gpus-per-node) whole nodes (one rank per GPU). Malformed rows are
skipped and counted. Rows of no GPU and rows that never ran (no start or
end time) are left out by rule and counted; failed and cancelled jobs ran
for their run time and are replayed. GPU shares are rounded up to whole
GPUs (Gantry allocates whole GPUs) and counted.

Model: a multi-node job on more leaf switches than ceil(nodes /
nodes-per-leaf) runs for duration * (1 + F * (leaves used - leaves needed)),
F = --spread-slowdown. Users' time limits (what backfill plans with) are
duration * --time-limit-factor; nobody is killed at the limit.

`gantry-sim goodput --help`: failures injected into a long job or a trace,
and the effective training time ratio of recovery policies.
`gantry-sim cache --help`: datasets on the trace's jobs, and the bytes read
from shared storage with and without cache-aware placement.
)";

}  // namespace

int main(int argc, char** argv) {
  using namespace gantry::sim;
  CLI::App app{kDescription, "gantry-sim"};
  std::string trace_path;
  std::string format_name = "auto";
  SimConfig config;
  std::size_t limit = 0;
  double start_s = 0, span_s = 0;
  bool json = false;
  std::vector<std::string> only;
  app.add_option("--trace", trace_path, "Job trace (CSV); required");
  app.add_option("--format", format_name,
                 "auto, philly, tiresias, alibaba2020, alibaba2023 or acme")
      ->capture_default_str();
  app.add_option("--nodes", config.cluster.nodes, "Nodes")
      ->capture_default_str();
  app.add_option("--gpus-per-node", config.cluster.gpus_per_node,
                 "GPUs per node")
      ->capture_default_str();
  app.add_option("--nodes-per-leaf", config.cluster.nodes_per_leaf,
                 "Nodes under each leaf switch")
      ->capture_default_str();
  app.add_option("--leaves-per-spine", config.cluster.leaves_per_spine,
                 "Leaf switches under each spine (a core joins >1 spines)")
      ->capture_default_str();
  app.add_option("--limit", limit,
                 "Run only the first N jobs of the window (0: all)")
      ->capture_default_str();
  app.add_option("--start", start_s,
                 "Window start, seconds after the trace's first submit")
      ->capture_default_str();
  app.add_option("--span", span_s, "Window length in seconds (0: to the end)")
      ->capture_default_str();
  app.add_option("--spread-slowdown", config.spread_slowdown,
                 "Slowdown per extra leaf switch a multi-node job spans")
      ->capture_default_str();
  app.add_option("--time-limit-factor", config.time_limit_factor,
                 "Time limit = trace duration x this (backfill's estimate)")
      ->capture_default_str();
  app.add_option("--policy", only,
                 "Run only these policies (gantry, fifo, backfill)");
  app.add_flag("--json", json, "Print JSON instead of the table");
  GoodputFlags goodput;
  CLI::App* goodput_command = AddGoodputCommand(app, goodput);
  CacheFlags cache;
  CLI::App* cache_command = AddCacheCommand(app, cache);
  app.require_subcommand(0, 1);
  CLI11_PARSE(app, argc, argv);
  if (goodput_command->parsed()) return RunGoodputCommand(goodput);
  if (cache_command->parsed()) return RunCacheCommand(cache);
  if (trace_path.empty()) {
    std::fprintf(stderr, "gantry-sim: --trace is required\n");
    return 2;
  }

  absl::StatusOr<TraceFormat> format = ParseTraceFormat(format_name);
  if (!format.ok()) {
    std::fprintf(stderr, "gantry-sim: %s\n",
                 std::string(format.status().message()).c_str());
    return 2;
  }
  if (absl::Status status = ValidateShape(config.cluster); !status.ok()) {
    std::fprintf(stderr, "gantry-sim: %s\n",
                 std::string(status.message()).c_str());
    return 2;
  }
  absl::StatusOr<Trace> trace = ReadTraceFile(trace_path, *format);
  if (!trace.ok()) {
    std::fprintf(stderr, "gantry-sim: %s\n",
                 std::string(trace.status().message()).c_str());
    return 1;
  }
  if (trace->skipped_rows > 0) {
    std::fprintf(stderr,
                 "gantry-sim: warning: skipped %d malformed row%s; first: %s\n",
                 trace->skipped_rows, trace->skipped_rows == 1 ? "" : "s",
                 trace->first_skip.c_str());
  }
  RunInfo info;
  info.trace_path = trace_path;
  info.format = std::string(TraceFormatName(trace->format));
  info.rows_read = static_cast<int>(trace->jobs.size());
  info.skipped_rows = trace->skipped_rows;
  info.cpu_only_rows = trace->cpu_only_rows;
  info.not_run_rows = trace->not_run_rows;
  info.fractional_gpu_rows = trace->fractional_gpu_rows;
  info.config = config;
  const std::vector<TraceJob> jobs =
      SelectWindow(std::move(trace->jobs), start_s, span_s, limit);
  info.jobs_in_window = static_cast<int>(jobs.size());
  if (jobs.empty()) {
    std::fprintf(stderr, "gantry-sim: no jobs in the chosen window\n");
    return 1;
  }

  std::vector<PolicyReport> reports;
  for (const SimPolicy& policy : StandardPolicies()) {
    if (!only.empty() &&
        std::find(only.begin(), only.end(), policy.name) == only.end()) {
      continue;
    }
    const auto begin = std::chrono::steady_clock::now();
    const std::clock_t cpu_begin = std::clock();
    absl::StatusOr<PolicyReport> report = Simulate(jobs, config, policy);
    if (!report.ok()) {
      std::fprintf(stderr, "gantry-sim: %s\n",
                   std::string(report.status().message()).c_str());
      return 2;
    }
    report->wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
            .count();
    report->cpu_s =
        static_cast<double>(std::clock() - cpu_begin) / CLOCKS_PER_SEC;
    report->outcomes.clear();
    reports.push_back(std::move(*report));
  }
  if (reports.empty()) {
    std::fprintf(stderr,
                 "gantry-sim: --policy names none of gantry, fifo, backfill\n");
    return 2;
  }
  const std::string out =
      json ? FormatJson(info, reports) : FormatTable(info, reports);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}
