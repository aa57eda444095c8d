#include "agent/agent_metrics.h"

#include <string>

namespace gantry::agent {
namespace {

prometheus::Gauge& MakeGauge(prometheus::Registry& registry,
                             const std::string& name, const std::string& help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(registry).Add(
      {});
}

prometheus::Counter& MakeCounter(prometheus::Registry& registry,
                                 const std::string& name,
                                 const std::string& help) {
  return prometheus::BuildCounter()
      .Name(name)
      .Help(help)
      .Register(registry)
      .Add({});
}

// Grows `counter` to `total` from `seen` (the total it was given last).
void GrowTo(prometheus::Counter& counter, uint64_t total, uint64_t& seen) {
  if (total > seen) counter.Increment(static_cast<double>(total - seen));
  seen = total;
}

}  // namespace

std::string_view RankExitOutcome(int exit_code, int signal) {
  if (signal != 0) return "signal";
  return exit_code == 0 ? "success" : "failure";
}

AgentMetrics::AgentMetrics(prometheus::Registry& registry)
    : node_healthy_(MakeGauge(
          registry, "gantry_agent_node_healthy",
          "1 when the node's last health check found no problem, else 0")),
      health_problems_(MakeGauge(
          registry, "gantry_agent_health_problems",
          "Problems the node's last health check found (missing GPUs, "
          "HCA ports down)")),
      ranks_running_(MakeGauge(registry, "gantry_agent_ranks_running",
                               "Ranks of jobs running on this node")),
      controller_connected_(MakeGauge(
          registry, "gantry_agent_controller_connected",
          "1 while the agent is registered on a stream to gantryd, else 0")),
      launches_(prometheus::BuildCounter()
                    .Name("gantry_agent_rank_launches_total")
                    .Help("Ranks this agent launched, by outcome (started, "
                          "or failed before the program ran)")
                    .Register(registry)),
      exits_(prometheus::BuildCounter()
                 .Name("gantry_agent_rank_exits_total")
                 .Help("Ranks that ended after starting, by outcome "
                       "(success, failure, signal)")
                 .Register(registry)),
      launches_started_(launches_.Add({{"outcome", "started"}})),
      launches_failed_(launches_.Add({{"outcome", "failed"}})),
      exits_success_(exits_.Add({{"outcome", "success"}})),
      exits_failure_(exits_.Add({{"outcome", "failure"}})),
      exits_signal_(exits_.Add({{"outcome", "signal"}})),
      cache_hits_(MakeCounter(registry, "gantry_agent_dataset_cache_hits_total",
                              "Datasets a job found in this node's cache "
                              "(the version it reads, whole)")),
      cache_misses_(MakeCounter(
          registry, "gantry_agent_dataset_cache_misses_total",
          "Datasets this node had to copy from shared storage (or finish "
          "copying) for a job")),
      cache_bytes_staged_(MakeCounter(
          registry, "gantry_agent_dataset_bytes_staged_total",
          "Bytes this node copied from shared storage into its cache")),
      cache_bytes_evicted_(
          MakeCounter(registry, "gantry_agent_dataset_bytes_evicted_total",
                      "Bytes of datasets evicted from this node's cache")),
      cache_bytes_(MakeGauge(registry, "gantry_agent_dataset_cache_bytes",
                             "Bytes the node's dataset cache holds")) {}

void AgentMetrics::SetHealthProblems(size_t problems) {
  node_healthy_.Set(problems == 0 ? 1 : 0);
  health_problems_.Set(static_cast<double>(problems));
}

void AgentMetrics::SetRanksRunning(size_t ranks) {
  ranks_running_.Set(static_cast<double>(ranks));
}

void AgentMetrics::SetControllerConnected(bool connected) {
  controller_connected_.Set(connected ? 1 : 0);
}

void AgentMetrics::SetDatasetCache(const DatasetCacheCounters& totals,
                                   uint64_t bytes_used) {
  GrowTo(cache_hits_, totals.hits, cache_seen_.hits);
  GrowTo(cache_misses_, totals.misses, cache_seen_.misses);
  GrowTo(cache_bytes_staged_, totals.bytes_staged, cache_seen_.bytes_staged);
  GrowTo(cache_bytes_evicted_, totals.bytes_evicted, cache_seen_.bytes_evicted);
  cache_bytes_.Set(static_cast<double>(bytes_used));
}

void AgentMetrics::CountRankStarted() { launches_started_.Increment(); }

void AgentMetrics::CountRankEnded(bool launch_failed, int exit_code,
                                  int signal) {
  if (launch_failed) {
    launches_failed_.Increment();
    return;
  }
  const std::string_view outcome = RankExitOutcome(exit_code, signal);
  if (outcome == "signal") {
    exits_signal_.Increment();
  } else if (outcome == "success") {
    exits_success_.Increment();
  } else {
    exits_failure_.Increment();
  }
}

}  // namespace gantry::agent
