// The agent's Prometheus metrics: node health, ranks running, rank launches
// and exits by outcome, whether the controller stream is up, and the
// dataset cache's hits, misses, bytes staged and evicted, and size. The Agent
// calls the update methods; gantry-agent serves the registry they live in
// (--metrics-listen).
//
// Thread-safe: the agent's threads (controller link, heartbeat, rank
// reaper) update and the HTTP endpoint's threads read; prometheus-cpp
// metrics are safe for that.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include "agent/datasets/dataset_cache.h"

namespace gantry::agent {

// How a rank that did start ended: "success" (exit 0), "failure" (non-zero
// exit) or "signal" (killed by one).
std::string_view RankExitOutcome(int exit_code, int signal);

class AgentMetrics {
 public:
  // Registers the families in `registry`, which must outlive this object.
  explicit AgentMetrics(prometheus::Registry& registry);
  AgentMetrics(const AgentMetrics&) = delete;
  AgentMetrics& operator=(const AgentMetrics&) = delete;

  // From each health check: healthy means no problems.
  void SetHealthProblems(size_t problems);
  void SetRanksRunning(size_t ranks);
  void SetControllerConnected(bool connected);

  // From each heartbeat: the dataset cache's totals since the agent
  // started (DatasetCache::Counters) and the bytes it holds now. Called
  // from one thread only (the counters grow by the change since the last
  // call).
  void SetDatasetCache(const DatasetCacheCounters& totals, uint64_t bytes_used);

  void CountRankStarted();
  // A rank ended; `launch_failed`: it never started (no exec).
  void CountRankEnded(bool launch_failed, int exit_code, int signal);

 private:
  prometheus::Gauge& node_healthy_;
  prometheus::Gauge& health_problems_;
  prometheus::Gauge& ranks_running_;
  prometheus::Gauge& controller_connected_;
  prometheus::Family<prometheus::Counter>& launches_;
  prometheus::Family<prometheus::Counter>& exits_;
  prometheus::Counter& launches_started_;
  prometheus::Counter& launches_failed_;
  prometheus::Counter& exits_success_;
  prometheus::Counter& exits_failure_;
  prometheus::Counter& exits_signal_;
  prometheus::Counter& cache_hits_;
  prometheus::Counter& cache_misses_;
  prometheus::Counter& cache_bytes_staged_;
  prometheus::Counter& cache_bytes_evicted_;
  prometheus::Gauge& cache_bytes_;
  DatasetCacheCounters cache_seen_;  // the totals of the last call
};

}  // namespace gantry::agent
