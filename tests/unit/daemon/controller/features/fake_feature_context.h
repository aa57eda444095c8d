// A FeatureContext over jobs a test sets by hand, for the features' unit
// tests (daemon/controller/controller_feature.h).
#pragma once

#include <map>
#include <set>

#include "common/clock.h"
#include "daemon/controller/controller_feature.h"

namespace gantry {

class FakeFeatureContext : public FeatureContext {
 public:
  explicit FakeFeatureContext(int64_t start_ms) : fake_clock(start_ms) {}

  const Clock& clock() const override { return fake_clock; }
  ControllerMetrics* metrics() const override { return nullptr; }
  void ForEachJob(
      const std::function<void(const v1::JobRecord&)>& visit) const override {
    for (const auto& [id, job] : jobs) visit(job);
  }
  void ForEachLiveJob(
      const std::function<void(const v1::JobRecord&)>& visit) const override {
    for (uint64_t id : live) {
      if (auto it = jobs.find(id); it != jobs.end()) visit(it->second);
    }
  }

  FakeClock fake_clock;
  std::map<uint64_t, v1::JobRecord> jobs;  // the live state, by id
  std::set<uint64_t> live;                 // which of them are live
};

}  // namespace gantry
