// The controller's metrics: state labels, the node and GPU census, and the
// job counts as a scrape would read them.
#include "daemon/controller/core/controller_metrics.h"

#include <catch2/catch.hpp>
#include <optional>
#include <string>

namespace gantry {
namespace controller_metrics_test {

// The value of `name`{label=value} in a collection of `registry`; nullopt
// if it is not there.
std::optional<double> Sample(prometheus::Registry& registry,
                             const std::string& name, const std::string& label,
                             const std::string& value) {
  for (const prometheus::MetricFamily& family : registry.Collect()) {
    if (family.name != name) continue;
    for (const prometheus::ClientMetric& metric : family.metric) {
      for (const prometheus::ClientMetric::Label& l : metric.label) {
        if (l.name == label && l.value == value) {
          return family.type == prometheus::MetricType::Counter
                     ? metric.counter.value
                     : metric.gauge.value;
        }
      }
    }
  }
  return std::nullopt;
}

TEST_CASE("job state labels are lower-case Slurm names", "[metrics]") {
  CHECK(JobStateLabel(JobStatus::kPending) == "pending");
  CHECK(JobStateLabel(JobStatus::kRunning) == "running");
  CHECK(JobStateLabel(JobStatus::kCompleted) == "completed");
  CHECK(JobStateLabel(JobStatus::kFailed) == "failed");
  CHECK(JobStateLabel(JobStatus::kCancelled) == "cancelled");
  CHECK(JobStateLabel(JobStatus::kTimeout) == "timeout");
  CHECK(JobStateLabel(JobStatus::kNodeFail) == "node_fail");
}

TEST_CASE("a node counts once, by whether it can take work", "[metrics]") {
  struct Row {
    v1::NodeState state;
    bool drained;
    bool healthy;
    std::string_view label;
  };
  const Row rows[] = {
      {v1::NODE_UP, false, true, "up"},
      {v1::NODE_UP, true, true, "drained"},
      {v1::NODE_UP, true, false, "drained"},
      {v1::NODE_UP, false, false, "degraded"},
      {v1::NODE_UNREACHABLE, false, true, "unreachable"},
      {v1::NODE_UNREACHABLE, true, false, "unreachable"},
      {v1::NODE_DOWN, false, true, "down"},
      {v1::NODE_STATE_UNSPECIFIED, false, true, "down"},
  };
  for (const Row& row : rows) {
    INFO("state " << row.state << " drained " << row.drained << " healthy "
                  << row.healthy);
    CHECK(NodeStateLabel(ClassifyNode(row.state, row.drained, row.healthy)) ==
          row.label);
  }
}

TEST_CASE("GPUs split into allocated, idle and down, summing to all",
          "[metrics]") {
  NodeCensus census;
  census.Add(NodeMetricState::kUp, 8, 3);           // 3 allocated, 5 idle
  census.Add(NodeMetricState::kDrained, 8, 2);      // 2 allocated, 6 down
  census.Add(NodeMetricState::kUnreachable, 4, 4);  // a job still holds them
  census.Add(NodeMetricState::kDown, 4, 0);
  census.Add(NodeMetricState::kUp, 2, 5);  // never more allocated than held
  const auto gpus = [&](GpuMetricState s) {
    return census.gpus[static_cast<size_t>(s)];
  };
  CHECK(gpus(GpuMetricState::kAllocated) == 3 + 2 + 4 + 2);
  CHECK(gpus(GpuMetricState::kIdle) == 5);
  CHECK(gpus(GpuMetricState::kDown) == 6 + 4);
  CHECK(census.nodes[static_cast<size_t>(NodeMetricState::kUp)] == 2);
  CHECK(census.nodes[static_cast<size_t>(NodeMetricState::kDrained)] == 1);
  CHECK(census.nodes[static_cast<size_t>(NodeMetricState::kDegraded)] == 0);
}

TEST_CASE("a scrape sees job counts follow the state changes", "[metrics]") {
  prometheus::Registry registry;
  ControllerMetrics metrics(registry);
  // Every state is there before any job is.
  CHECK(Sample(registry, "gantry_jobs", "state", "node_fail") == 0.0);
  metrics.JobAdded(JobStatus::kPending);
  metrics.JobAdded(JobStatus::kPending);
  metrics.JobAdded(JobStatus::kCompleted);  // loaded from the store
  metrics.JobMoved(JobStatus::kPending, JobStatus::kRunning);
  metrics.JobMoved(JobStatus::kRunning, JobStatus::kRunning);  // no change
  CHECK(Sample(registry, "gantry_jobs", "state", "pending") == 1.0);
  CHECK(Sample(registry, "gantry_jobs", "state", "running") == 1.0);
  metrics.JobMoved(JobStatus::kRunning, JobStatus::kCompleted);
  CHECK(Sample(registry, "gantry_jobs", "state", "running") == 0.0);
  CHECK(Sample(registry, "gantry_jobs", "state", "completed") == 2.0);

  metrics.CountRestart("NodeFail");
  metrics.CountRestart("NodeFail");
  CHECK(Sample(registry, "gantry_job_restarts_total", "reason", "NodeFail") ==
        2.0);

  NodeCensus census;
  census.Add(NodeMetricState::kUp, 4, 1);
  metrics.PublishNodes(census);
  CHECK(Sample(registry, "gantry_nodes", "state", "up") == 1.0);
  CHECK(Sample(registry, "gantry_nodes", "state", "down") == 0.0);
  CHECK(Sample(registry, "gantry_gpus", "state", "idle") == 3.0);
  metrics.PublishNodes(NodeCensus());  // replaced, not added to
  CHECK(Sample(registry, "gantry_gpus", "state", "idle") == 0.0);
}

TEST_CASE("the last day's goodput replaces its gauges, and ended jobs add up",
          "[metrics]") {
  prometheus::Registry registry;
  ControllerMetrics metrics(registry);
  GoodputTotals day;
  day[GoodputKind::kQueued] = 10'000;
  day[GoodputKind::kProductive] = 9'000;
  day[GoodputKind::kLost] = 1'000;
  metrics.PublishGoodput(day);
  day[GoodputKind::kLost] = 500;
  metrics.PublishGoodput(day);
  CHECK(Sample(registry, "gantry_goodput_last_day_seconds", "segment",
               "lost") == 0.5);
  CHECK(Sample(registry, "gantry_goodput_last_day_seconds", "segment",
               "recovering") == 0.0);
  double ettr = -1;
  for (const prometheus::MetricFamily& family : registry.Collect()) {
    if (family.name == "gantry_ettr_last_day") {
      ettr = family.metric.at(0).gauge.value;
    }
  }
  CHECK(ettr == Approx(9.0 / 9.5));
  metrics.CountFinishedGoodput(day);
  metrics.CountFinishedGoodput(day);
  CHECK(Sample(registry, "gantry_goodput_seconds_total", "segment",
               "productive") == 18.0);
  CHECK(Sample(registry, "gantry_goodput_seconds_total", "segment",
               "detecting") == 0.0);
}

}  // namespace controller_metrics_test
}  // namespace gantry
