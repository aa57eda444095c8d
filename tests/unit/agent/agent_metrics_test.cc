// The agent's metrics as a scrape reads them after rank launches and exits.
#include "agent/agent_metrics.h"

#include <catch2/catch.hpp>
#include <optional>
#include <string>

namespace gantry::agent {
namespace agent_metrics_test {

// The value of `name`, with label outcome=`outcome` if one is given.
std::optional<double> Sample(prometheus::Registry& registry,
                             const std::string& name,
                             const std::string& outcome = "") {
  for (const prometheus::MetricFamily& family : registry.Collect()) {
    if (family.name != name) continue;
    for (const prometheus::ClientMetric& metric : family.metric) {
      const bool matches =
          outcome.empty()
              ? metric.label.empty()
              : metric.label.size() == 1 && metric.label[0].value == outcome;
      if (!matches) continue;
      return family.type == prometheus::MetricType::Counter
                 ? metric.counter.value
                 : metric.gauge.value;
    }
  }
  return std::nullopt;
}

TEST_CASE("a signal outranks the exit code", "[metrics]") {
  CHECK(RankExitOutcome(0, 0) == "success");
  CHECK(RankExitOutcome(3, 0) == "failure");
  CHECK(RankExitOutcome(0, 9) == "signal");
  CHECK(RankExitOutcome(137, 9) == "signal");
}

TEST_CASE("launches and exits are counted by outcome", "[metrics]") {
  prometheus::Registry registry;
  AgentMetrics metrics(registry);
  metrics.CountRankStarted();
  metrics.CountRankStarted();
  metrics.CountRankEnded(/*launch_failed=*/true, 127, 0);
  metrics.CountRankEnded(false, 0, 0);
  metrics.CountRankEnded(false, 1, 0);
  metrics.CountRankEnded(false, 0, 15);
  CHECK(Sample(registry, "gantry_agent_rank_launches_total", "started") == 2.0);
  CHECK(Sample(registry, "gantry_agent_rank_launches_total", "failed") == 1.0);
  CHECK(Sample(registry, "gantry_agent_rank_exits_total", "success") == 1.0);
  CHECK(Sample(registry, "gantry_agent_rank_exits_total", "failure") == 1.0);
  CHECK(Sample(registry, "gantry_agent_rank_exits_total", "signal") == 1.0);
}

TEST_CASE("health, ranks and the controller stream are gauges", "[metrics]") {
  prometheus::Registry registry;
  AgentMetrics metrics(registry);
  CHECK(Sample(registry, "gantry_agent_controller_connected") == 0.0);
  metrics.SetHealthProblems(2);
  metrics.SetRanksRunning(4);
  metrics.SetControllerConnected(true);
  CHECK(Sample(registry, "gantry_agent_node_healthy") == 0.0);
  CHECK(Sample(registry, "gantry_agent_health_problems") == 2.0);
  CHECK(Sample(registry, "gantry_agent_ranks_running") == 4.0);
  CHECK(Sample(registry, "gantry_agent_controller_connected") == 1.0);
  metrics.SetHealthProblems(0);
  CHECK(Sample(registry, "gantry_agent_node_healthy") == 1.0);
}

TEST_CASE("the dataset cache's totals become counters that only grow",
          "[metrics]") {
  prometheus::Registry registry;
  AgentMetrics metrics(registry);
  DatasetCacheCounters totals;
  totals.hits = 2;
  totals.misses = 1;
  totals.bytes_staged = 4096;
  metrics.SetDatasetCache(totals, 4096);
  // A heartbeat with nothing new adds nothing.
  metrics.SetDatasetCache(totals, 4096);
  CHECK(Sample(registry, "gantry_agent_dataset_cache_hits_total") == 2.0);
  CHECK(Sample(registry, "gantry_agent_dataset_cache_misses_total") == 1.0);
  CHECK(Sample(registry, "gantry_agent_dataset_bytes_staged_total") == 4096.0);
  CHECK(Sample(registry, "gantry_agent_dataset_bytes_evicted_total") == 0.0);
  CHECK(Sample(registry, "gantry_agent_dataset_cache_bytes") == 4096.0);
  totals.misses = 2;
  totals.bytes_staged = 6144;
  totals.bytes_evicted = 4096;
  metrics.SetDatasetCache(totals, 2048);
  CHECK(Sample(registry, "gantry_agent_dataset_cache_misses_total") == 2.0);
  CHECK(Sample(registry, "gantry_agent_dataset_bytes_staged_total") == 6144.0);
  CHECK(Sample(registry, "gantry_agent_dataset_bytes_evicted_total") == 4096.0);
  CHECK(Sample(registry, "gantry_agent_dataset_cache_bytes") == 2048.0);
}

}  // namespace agent_metrics_test
}  // namespace gantry::agent
