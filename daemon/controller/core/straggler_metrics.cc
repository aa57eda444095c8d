#include "daemon/controller/core/straggler_metrics.h"

#include <set>

namespace gantry {

StragglerMetrics::StragglerMetrics(prometheus::Registry& registry) {
  jobs_ = &prometheus::BuildGauge()
               .Name("gantry_job_stragglers")
               .Help(
                   "Nodes of a running job whose ranks step well below "
                   "their peers (gantryd --straggler-factor) for long "
                   "enough (--straggler-duration)")
               .Register(registry);
  slowdown_ = &prometheus::BuildGauge()
                   .Name("gantry_straggler_slowdown")
                   .Help(
                       "A straggler's step time over the median of the "
                       "other nodes of its job")
                   .Register(registry);
  swaps_ = &prometheus::BuildCounter()
                .Name("gantry_straggler_swaps_total")
                .Help(
                    "Straggler nodes drained and swapped out of their "
                    "job at its checkpoint (--straggler-policy=swap)")
                .Register(registry)
                .Add({});
}

void StragglerMetrics::Publish(
    const std::map<uint64_t, v1::JobStragglers>& jobs) {
  std::set<uint64_t> job_seen;
  std::set<std::pair<uint64_t, std::string>> node_seen;
  for (const auto& [id, job] : jobs) {
    if (job.stragglers().empty()) continue;
    job_seen.insert(id);
    prometheus::Gauge*& gauge = job_gauges_[id];
    if (gauge == nullptr) {
      gauge = &jobs_->Add({{"job", std::to_string(id)}});
    }
    gauge->Set(job.stragglers_size());
    for (const v1::Straggler& straggler : job.stragglers()) {
      std::pair<uint64_t, std::string> key{id, straggler.node()};
      node_seen.insert(key);
      prometheus::Gauge*& node = node_gauges_[key];
      if (node == nullptr) {
        node = &slowdown_->Add(
            {{"job", std::to_string(id)}, {"node", straggler.node()}});
      }
      node->Set(straggler.slowdown());
    }
  }
  for (auto it = job_gauges_.begin(); it != job_gauges_.end();) {
    if (job_seen.count(it->first)) {
      ++it;
      continue;
    }
    jobs_->Remove(it->second);
    it = job_gauges_.erase(it);
  }
  for (auto it = node_gauges_.begin(); it != node_gauges_.end();) {
    if (node_seen.count(it->first)) {
      ++it;
      continue;
    }
    slowdown_->Remove(it->second);
    it = node_gauges_.erase(it);
  }
}

void StragglerMetrics::CountSwaps(uint32_t nodes) { swaps_->Increment(nodes); }

}  // namespace gantry
