#include "daemon/simulator/simulation.h"

#include <algorithm>
#include <cmath>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"

namespace gantry::sim {
namespace {

struct Running {
  RunningJob job;
  JobOutcome outcome;
  std::string user;
};

struct Completion {
  int64_t end_ms;
  JobId id;
  bool operator>(const Completion& other) const {
    return end_ms != other.end_ms ? end_ms > other.end_ms : id > other.id;
  }
};

// The dataset model's side of a run: which job reads what, and the nodes'
// caches as jobs start and end.
class DatasetReads {
 public:
  DatasetReads(const SimConfig& config, std::size_t nodes)
      : config_(config),
        caches_(config.datasets ? nodes : 0,
                config.datasets ? static_cast<uint64_t>(std::llround(
                                      config.datasets->cache_gb * 1e9))
                                : 0) {}

  void Attach(const TraceJob& job, PendingJob& pending) {
    if (!config_.datasets) return;
    std::optional<DatasetNeed> need = DatasetOf(*config_.datasets, job);
    if (!need) return;
    if (config_.cache_aware) {
      pending.datasets = {*need};
      pending.dataset_locality = config_.dataset_locality;
    }
    needs_.emplace(job.id, *std::move(need));
  }

  // What the scheduler sees of the caches (only when cache-aware).
  void ShowCaches(std::vector<NodeSnapshot>& nodes) {
    if (!config_.cache_aware || shown_version_ == caches_.version()) return;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      nodes[i].cached_datasets = caches_.Held(i);
    }
    shown_version_ = caches_.version();
  }

  void Start(const RunningJob& job, int64_t now, PolicyReport& report) {
    auto it = needs_.find(job.id);
    if (it == needs_.end()) return;
    for (const NodeShare& share : job.shares) {
      report.dataset_bytes += it->second.bytes;
      if (!caches_.Read(share.node.index(), it->second, now)) {
        report.shared_bytes += it->second.bytes;
      }
    }
  }

  void End(const RunningJob& job) {
    auto it = needs_.find(job.id);
    if (it == needs_.end()) return;
    for (const NodeShare& share : job.shares) {
      caches_.Release(share.node.index(), it->second.key);
    }
    needs_.erase(it);
  }

 private:
  const SimConfig& config_;
  NodeCaches caches_;
  std::unordered_map<JobId, DatasetNeed> needs_;
  uint64_t shown_version_ = UINT64_MAX;
};

double Percentile(std::vector<double> values, double fraction) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  // Nearest rank.
  auto rank = static_cast<std::size_t>(
      std::ceil(fraction * static_cast<double>(values.size())));
  rank = std::clamp<std::size_t>(rank, 1, values.size());
  return values[rank - 1];
}

// Takes or returns one share's resources on its node.
void Take(NodeSnapshot& node, const NodeShare& share) {
  node.cpus_free -= share.cpus;
  node.mem_free_mb -= share.mem_mb;
  std::erase_if(node.free_gpus, [&](uint32_t g) {
    return std::find(share.gpus.begin(), share.gpus.end(), g) !=
           share.gpus.end();
  });
}

void Give(NodeSnapshot& node, const NodeShare& share) {
  node.cpus_free += share.cpus;
  node.mem_free_mb += share.mem_mb;
  node.free_gpus.insert(node.free_gpus.end(), share.gpus.begin(),
                        share.gpus.end());
  std::sort(node.free_gpus.begin(), node.free_gpus.end());
}

void Summarize(const SimConfig& config, PolicyReport& report,
               int64_t first_submit_ms, int64_t last_end_ms) {
  const auto& outcomes = report.outcomes;
  report.jobs_run = static_cast<int>(outcomes.size());
  if (outcomes.empty()) return;
  std::vector<double> delays, jcts;
  double multi_delay_sum = 0;
  double held_gpu_ms = 0, useful_gpu_ms = 0, jct_sum = 0;
  int fewest = 0;
  double leaves_sum = 0;
  for (const JobOutcome& o : outcomes) {
    delays.push_back(static_cast<double>(o.start_ms - o.submit_ms) / 1000.0);
    jcts.push_back(static_cast<double>(o.end_ms - o.submit_ms) / 1000.0);
    jct_sum += jcts.back();
    held_gpu_ms += static_cast<double>(o.gpus_held) *
                   static_cast<double>(o.end_ms - o.start_ms);
    useful_gpu_ms += o.useful_gpu_ms;
    if (o.nodes > 1) {
      ++report.multi_node_jobs;
      leaves_sum += o.leaves_used;
      multi_delay_sum += delays.back();
      if (o.leaves_used <= o.leaves_needed) ++fewest;
    }
  }
  const double n = static_cast<double>(outcomes.size());
  const int64_t busy_ms = std::max<int64_t>(1, last_end_ms - first_submit_ms);
  report.busy_period_s = static_cast<double>(busy_ms) / 1000.0;
  const double capacity_gpu_ms =
      static_cast<double>(busy_ms) *
      static_cast<double>(config.cluster.TotalGpus());
  report.utilization = held_gpu_ms / capacity_gpu_ms;
  report.useful_utilization = useful_gpu_ms / capacity_gpu_ms;
  double delay_sum = 0;
  for (double d : delays) delay_sum += d;
  report.delay_mean_s = delay_sum / n;
  report.delay_p50_s = Percentile(delays, 0.50);
  report.delay_p99_s = Percentile(delays, 0.99);
  report.jct_mean_s = jct_sum / n;
  report.jct_p99_s = Percentile(std::move(jcts), 0.99);
  if (report.multi_node_jobs > 0) {
    report.fewest_leaves_share =
        fewest / static_cast<double>(report.multi_node_jobs);
    report.mean_leaves = leaves_sum / report.multi_node_jobs;
    report.multi_delay_mean_s = multi_delay_sum / report.multi_node_jobs;
  }
}

}  // namespace

std::vector<SimPolicy> StandardPolicies() {
  return {
      {.name = "gantry",
       .backfill = true,
       .topology_aware = true,
       .priority_order = true},
      {.name = "fifo",
       .backfill = false,
       .topology_aware = false,
       .priority_order = false},
      {.name = "backfill",
       .backfill = true,
       .topology_aware = false,
       .priority_order = true},
  };
}

std::vector<TraceJob> SelectWindow(std::vector<TraceJob> jobs, double start_s,
                                   double span_s, std::size_t limit) {
  std::stable_sort(
      jobs.begin(), jobs.end(), [](const TraceJob& a, const TraceJob& b) {
        return a.submit_ms != b.submit_ms ? a.submit_ms < b.submit_ms
                                          : a.id < b.id;
      });
  if (jobs.empty()) return jobs;
  const int64_t from = jobs.front().submit_ms +
                       static_cast<int64_t>(std::llround(start_s * 1000));
  const int64_t to =
      span_s > 0 ? from + static_cast<int64_t>(std::llround(span_s * 1000))
                 : INT64_MAX;
  std::vector<TraceJob> window;
  for (TraceJob& job : jobs) {
    if (job.submit_ms < from || job.submit_ms >= to) continue;
    if (limit != 0 && window.size() >= limit) break;
    window.push_back(std::move(job));
  }
  return window;
}

absl::StatusOr<PolicyReport> Simulate(const std::vector<TraceJob>& trace_jobs,
                                      const SimConfig& config,
                                      const SimPolicy& policy) {
  if (absl::Status status = ValidateShape(config.cluster); !status.ok()) {
    return status;
  }
  if (!(config.spread_slowdown >= 0) || !(config.time_limit_factor >= 0)) {
    return absl::InvalidArgumentError(
        "--spread-slowdown and --time-limit-factor must be >= 0");
  }
  const ClusterShape& shape = config.cluster;
  PolicyReport report;
  report.policy = policy.name;

  std::vector<TraceJob> jobs;
  for (const TraceJob& job : trace_jobs) {
    if (GangFor(job.gpus, shape).nodes > shape.nodes) {
      ++report.jobs_never_fit;
    } else {
      jobs.push_back(job);
    }
  }
  std::stable_sort(
      jobs.begin(), jobs.end(), [](const TraceJob& a, const TraceJob& b) {
        return a.submit_ms != b.submit_ms ? a.submit_ms < b.submit_ms
                                          : a.id < b.id;
      });
  if (jobs.empty()) return report;

  std::unordered_map<JobId, const TraceJob*> by_id;
  for (const TraceJob& job : jobs) by_id[job.id] = &job;

  std::vector<NodeSnapshot> nodes = BuildNodes(shape);
  uint64_t free_gpus = shape.TotalGpus();
  std::vector<PendingJob> pending;
  std::unordered_map<JobId, Running> running_by_id;
  std::vector<RunningJob> running;  // rebuilt when running_by_id changes
  bool running_dirty = false;
  std::priority_queue<Completion, std::vector<Completion>, std::greater<>>
      completions;
  FairShare fair_share(config.weights.half_life_ms);
  DatasetReads reads(config, nodes.size());

  const int64_t first_submit_ms = jobs.front().submit_ms;
  int64_t last_end_ms = first_submit_ms;
  std::size_t next = 0;
  while (next < jobs.size() || !completions.empty()) {
    int64_t now = INT64_MAX;
    if (next < jobs.size()) now = jobs[next].submit_ms;
    if (!completions.empty()) now = std::min(now, completions.top().end_ms);

    while (!completions.empty() && completions.top().end_ms == now) {
      auto it = running_by_id.find(completions.top().id);
      completions.pop();
      for (const NodeShare& share : it->second.job.shares) {
        Give(nodes[share.node.index()], share);
        free_gpus += share.gpus.size();
      }
      reads.End(it->second.job);
      const JobOutcome& o = it->second.outcome;
      fair_share.AddUsage(
          it->second.user,
          o.gpus_held * static_cast<double>(o.end_ms - o.start_ms) / 1000.0,
          now);
      last_end_ms = std::max(last_end_ms, o.end_ms);
      report.outcomes.push_back(o);
      running_by_id.erase(it);
      running_dirty = true;
    }
    while (next < jobs.size() && jobs[next].submit_ms == now) {
      const TraceJob& job = jobs[next++];
      const GangShape gang = GangFor(job.gpus, shape);
      PendingJob p;
      p.id = job.id;
      p.partition = kPartition;
      p.nodes = gang.nodes;
      p.gpus_per_node = gang.gpus_per_node;
      p.max_tasks_per_node = std::max<uint32_t>(1, gang.gpus_per_node);
      p.cpus_per_task = 1;
      p.user = job.user;
      p.submit_time_ms = job.submit_ms;
      p.time_limit_ms = std::max<int64_t>(
          1, static_cast<int64_t>(
                 std::llround(static_cast<double>(job.duration_ms) *
                              config.time_limit_factor)));
      reads.Attach(job, p);
      pending.push_back(std::move(p));
    }
    if (pending.empty() || free_gpus == 0) continue;

    if (running_dirty) {
      running.clear();
      for (const auto& [id, r] : running_by_id) running.push_back(r.job);
      running_dirty = false;
    }
    // A job slowed past its time limit is expected to end any moment now.
    for (RunningJob& r : running) {
      r.expected_end_ms = std::max(r.expected_end_ms, now + 1);
    }
    if (policy.priority_order) {
      OrderQueue(pending, fair_share, config.weights, now);
    }
    reads.ShowCaches(nodes);
    SchedulerOptions options;
    options.backfill = policy.backfill;
    options.topology_aware = policy.topology_aware;
    options.now_ms = now;
    ScheduleResult result = Schedule(nodes, pending, running, options);
    ++report.schedule_calls;
    if (result.starts.empty()) continue;

    std::unordered_set<JobId> started;
    for (JobStart& start : result.starts) {
      const TraceJob& job = *by_id.at(start.job_id);
      const GangShape gang = GangFor(job.gpus, shape);
      std::unordered_set<uint32_t> leaves;
      uint32_t gpus_held = 0;
      for (const NodeShare& share : start.shares) {
        Take(nodes[share.node.index()], share);
        free_gpus -= share.gpus.size();
        gpus_held += static_cast<uint32_t>(share.gpus.size());
        leaves.insert(LeafOf(shape, share.node.index()));
      }
      Running r;
      r.user = job.user;
      JobOutcome& o = r.outcome;
      o.id = job.id;
      o.submit_ms = job.submit_ms;
      o.start_ms = now;
      o.nodes = gang.nodes;
      o.gpus_held = gpus_held;
      o.useful_gpu_ms =
          static_cast<double>(job.gpus) * static_cast<double>(job.duration_ms);
      o.leaves_used = static_cast<uint32_t>(leaves.size());
      o.leaves_needed = gang.LeavesNeeded(shape);
      const double slowdown =
          1.0 + config.spread_slowdown *
                    static_cast<double>(o.leaves_used > o.leaves_needed
                                            ? o.leaves_used - o.leaves_needed
                                            : 0);
      // A zero-length job still ends after it starts, so events stay ordered.
      const int64_t run_ms = std::max<int64_t>(
          1, static_cast<int64_t>(std::llround(
                 static_cast<double>(job.duration_ms) * slowdown)));
      o.end_ms = now + run_ms;
      if (start.backfilled) ++report.backfilled_jobs;
      r.job.id = job.id;
      r.job.shares = std::move(start.shares);
      reads.Start(r.job, now, report);
      r.job.expected_end_ms =
          now + std::max<int64_t>(1, static_cast<int64_t>(std::llround(
                                         static_cast<double>(job.duration_ms) *
                                         config.time_limit_factor)));
      completions.push({o.end_ms, o.id});
      started.insert(job.id);
      running_by_id.emplace(job.id, std::move(r));
    }
    running_dirty = true;
    std::erase_if(pending,
                  [&](const PendingJob& p) { return started.count(p.id) > 0; });
  }
  // Jobs still pending here can never start (nothing runs, nothing comes).
  report.jobs_never_fit += static_cast<int>(pending.size());
  Summarize(config, report, first_submit_ms, last_end_ms);
  return report;
}

}  // namespace gantry::sim
