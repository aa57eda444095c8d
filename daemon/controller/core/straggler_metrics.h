// The straggler feature's metrics (features/stragglers/straggler_feature.h):
//   gantry_job_stragglers{job}            stragglers of each running job
//                                          that has any
//   gantry_straggler_slowdown{job,node}   each straggler's step time over
//                                          its peers' median
//   gantry_straggler_swaps_total          nodes swapped out at a checkpoint
// Series of jobs and nodes that no longer straggle are removed, so the
// label sets stay as few as the stragglers.
//
// Threading: Publish and CountSwaps on the controller's loop thread;
// prometheus-cpp metrics are read from the endpoint's threads.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include "gantry/v1/types.pb.h"

namespace gantry {

class StragglerMetrics {
 public:
  explicit StragglerMetrics(prometheus::Registry& registry);
  StragglerMetrics(const StragglerMetrics&) = delete;
  StragglerMetrics& operator=(const StragglerMetrics&) = delete;

  // Replaces every series with these jobs' confirmed stragglers.
  void Publish(const std::map<uint64_t, v1::JobStragglers>& jobs);
  void CountSwaps(uint32_t nodes);

 private:
  prometheus::Family<prometheus::Gauge>* jobs_ = nullptr;
  prometheus::Family<prometheus::Gauge>* slowdown_ = nullptr;
  prometheus::Counter* swaps_ = nullptr;
  std::map<uint64_t, prometheus::Gauge*> job_gauges_;
  std::map<std::pair<uint64_t, std::string>, prometheus::Gauge*> node_gauges_;
};

}  // namespace gantry
