#include "daemon/simulator/cache_cli.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "daemon/simulator/cli_failure.h"
#include "daemon/simulator/trace_reader.h"
#include "daemon/simulator/trace_window_flags.h"

namespace gantry::sim {
namespace {

constexpr char kCacheDescription[] =
    R"(Attach datasets to a trace's jobs and count the bytes read from shared
storage when the nodes cache what their jobs read, under three placements
(all with gantry's queue policy: priority order, EASY backfill,
topology-aware):
  topology        placement ignores the caches (a node holds a job's data
                  only by chance)
  cache+topology  cache-aware, the default (--dataset-locality=topology):
                  among placements of the same switch span, the nodes
                  holding the most of the job's dataset
  cache-first     --dataset-locality=cache: the most bytes cached, then the
                  narrowest span
Model: each fair-share user of the trace owns --datasets-per-user datasets
of log-uniform sizes in --dataset-gb; a job reads one of its user's (the
k-th with weight 1/k^--zipf), --job-share of jobs read one; every node of a
job reads the whole dataset once at start, from its cache (a hit) or from
shared storage (a miss, then kept). Each node caches --cache-gb with
least-recently-used eviction, never evicting what a running job there
reads. All draws follow --seed. Staging time is not modelled: jobs run for
their trace duration either way.
)";

struct Row {
  std::string name;
  bool cache_aware = false;
  DatasetLocality locality = DatasetLocality::kTopology;
};

absl::Status ParseSizes(const std::string& text, DatasetModelConfig& model) {
  std::pair<std::string, std::string> parts = absl::StrSplit(text, '-');
  if (parts.second.empty()) parts.second = parts.first;
  if (!absl::SimpleAtod(parts.first, &model.min_gb) ||
      !absl::SimpleAtod(parts.second, &model.max_gb)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--dataset-gb %s: expected MIN-MAX in GB", text));
  }
  return absl::OkStatus();
}

double Tb(uint64_t bytes) { return static_cast<double>(bytes) / 1e12; }

double Saved(const PolicyReport& r) {
  return r.dataset_bytes == 0 ? 0
                              : 1.0 - static_cast<double>(r.shared_bytes) /
                                          static_cast<double>(r.dataset_bytes);
}

std::string Table(const CacheFlags& f, std::size_t jobs,
                  const std::vector<PolicyReport>& reports) {
  const ClusterShape& c = f.config.cluster;
  const DatasetModelConfig& m = f.model;
  std::string out = absl::StrFormat(
      "trace %s: %zu jobs; cluster %u nodes x %u GPUs, %u nodes/leaf, %u "
      "leaves\ndatasets: %u per user, %.4g-%.4g GB, zipf %.3g, %.3g of jobs; "
      "cache %.4g GB per node; seed %u\n\n",
      f.trace_path, jobs, c.nodes, c.gpus_per_node, c.nodes_per_leaf,
      c.Leaves(), m.datasets_per_user, m.min_gb, m.max_gb, m.zipf, m.job_share,
      m.cache_gb, m.seed);
  absl::StrAppendFormat(&out, "%-15s %5s %9s %9s %6s %6s %7s %6s %10s %6s\n",
                        "PLACEMENT", "JOBS", "READ_TB", "SHARED_TB", "SAVED",
                        "MULTI", "FEWEST", "LEAVES", "DELAY_MEAN", "UTIL");
  for (const PolicyReport& r : reports) {
    absl::StrAppendFormat(
        &out, "%-15s %5d %9.1f %9.1f %6.3f %6d %7.3f %6.2f %10.0f %6.3f\n",
        r.policy, r.jobs_run, Tb(r.dataset_bytes), Tb(r.shared_bytes), Saved(r),
        r.multi_node_jobs, r.fewest_leaves_share, r.mean_leaves, r.delay_mean_s,
        r.utilization);
  }
  absl::StrAppend(
      &out,
      "\nREAD_TB: dataset bytes the jobs' nodes read (1 TB = 1e12 bytes); "
      "SHARED_TB: of them, read from shared storage; SAVED: the share served "
      "from node caches.\nMULTI: multi-node jobs; FEWEST: share of them on "
      "the fewest possible leaf switches; LEAVES: mean leaves per multi-node "
      "job; DELAY_MEAN in seconds.\n");
  return out;
}

std::string Json(const CacheFlags& f, std::size_t jobs,
                 const std::vector<PolicyReport>& reports) {
  nlohmann::json rows = nlohmann::json::array();
  for (const PolicyReport& r : reports) {
    rows.push_back({{"placement", r.policy},
                    {"jobs_run", r.jobs_run},
                    {"dataset_bytes", r.dataset_bytes},
                    {"shared_bytes", r.shared_bytes},
                    {"saved_share", Saved(r)},
                    {"multi_node_jobs", r.multi_node_jobs},
                    {"fewest_leaves_share", r.fewest_leaves_share},
                    {"mean_leaves", r.mean_leaves},
                    {"delay_mean_s", r.delay_mean_s},
                    {"utilization", r.utilization}});
  }
  const DatasetModelConfig& m = f.model;
  nlohmann::json doc = {{"trace", f.trace_path},
                        {"jobs", jobs},
                        {"nodes", f.config.cluster.nodes},
                        {"datasets_per_user", m.datasets_per_user},
                        {"dataset_gb", {m.min_gb, m.max_gb}},
                        {"zipf", m.zipf},
                        {"job_share", m.job_share},
                        {"cache_gb", m.cache_gb},
                        {"seed", m.seed},
                        {"placements", rows}};
  return doc.dump(2) + "\n";
}

}  // namespace

CLI::App* AddCacheCommand(CLI::App& app, CacheFlags& f) {
  CLI::App* cmd = app.add_subcommand(
      "cache", "Datasets on trace jobs; shared-storage bytes by placement");
  cmd->footer(kCacheDescription);
  ClusterShape& c = f.config.cluster;
  AddTraceWindowFlags(cmd, "Job trace (CSV); required", f.trace_path, f.format,
                      f.limit, f.start_s, f.span_s);
  cmd->add_option("--nodes", c.nodes, "Nodes")->capture_default_str();
  cmd->add_option("--gpus-per-node", c.gpus_per_node, "GPUs per node")
      ->capture_default_str();
  cmd->add_option("--nodes-per-leaf", c.nodes_per_leaf,
                  "Nodes under each leaf switch")
      ->capture_default_str();
  cmd->add_option("--leaves-per-spine", c.leaves_per_spine,
                  "Leaf switches under each spine")
      ->capture_default_str();
  cmd->add_option("--datasets-per-user", f.model.datasets_per_user,
                  "Datasets each fair-share user owns")
      ->capture_default_str();
  cmd->add_option("--dataset-gb", f.dataset_gb,
                  "Dataset sizes, MIN-MAX GB (log-uniform)")
      ->capture_default_str();
  cmd->add_option("--zipf", f.model.zipf,
                  "A user's k-th dataset is read with weight 1/k^this")
      ->capture_default_str();
  cmd->add_option("--job-share", f.model.job_share,
                  "Share of jobs that read a dataset")
      ->capture_default_str();
  cmd->add_option("--cache-gb", f.model.cache_gb, "Cache size per node (GB)")
      ->capture_default_str();
  cmd->add_option("--seed", f.model.seed, "Seed of the dataset draws")
      ->capture_default_str();
  cmd->add_flag("--json", f.json, "Print JSON instead of the table");
  return cmd;
}

int RunCacheCommand(CacheFlags& f) {
  if (f.trace_path.empty()) {
    return PrintFailure(
        absl::InvalidArgumentError("cache: --trace is required"), 2);
  }
  if (absl::Status status = ParseSizes(f.dataset_gb, f.model); !status.ok()) {
    return PrintFailure(status, 2);
  }
  if (absl::Status status = ValidateDatasetModel(f.model); !status.ok()) {
    return PrintFailure(status, 2);
  }
  if (absl::Status status = ValidateShape(f.config.cluster); !status.ok()) {
    return PrintFailure(status, 2);
  }
  absl::StatusOr<TraceFormat> format = ParseTraceFormat(f.format);
  if (!format.ok()) return PrintFailure(format.status(), 2);
  absl::StatusOr<Trace> trace = ReadTraceFile(f.trace_path, *format);
  if (!trace.ok()) return PrintFailure(trace.status(), 1);
  const std::vector<TraceJob> jobs =
      SelectWindow(std::move(trace->jobs), f.start_s, f.span_s, f.limit);
  if (jobs.empty()) {
    return PrintFailure(
        absl::InvalidArgumentError("no jobs in the chosen window"), 1);
  }
  const SimPolicy gantry = StandardPolicies().front();
  const std::vector<Row> rows = {
      {"topology", false, DatasetLocality::kTopology},
      {"cache+topology", true, DatasetLocality::kTopology},
      {"cache-first", true, DatasetLocality::kCache}};
  std::vector<PolicyReport> reports;
  for (const Row& row : rows) {
    SimConfig config = f.config;
    config.datasets = f.model;
    config.cache_aware = row.cache_aware;
    config.dataset_locality = row.locality;
    absl::StatusOr<PolicyReport> report = Simulate(jobs, config, gantry);
    if (!report.ok()) return PrintFailure(report.status(), 2);
    report->policy = row.name;
    report->outcomes.clear();
    reports.push_back(std::move(*report));
  }
  const std::string out =
      f.json ? Json(f, jobs.size(), reports) : Table(f, jobs.size(), reports);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace gantry::sim
