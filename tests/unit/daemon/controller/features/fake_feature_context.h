// A FeatureContext over jobs a test sets by hand, for the features' unit
// tests (daemon/controller/controller_feature.h). What a feature asks of
// the core is recorded, not carried out, so a test can check it.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

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
  const v1::JobRecord* FindJob(uint64_t job_id) const override {
    auto it = jobs.find(job_id);
    return it == jobs.end() ? nullptr : &it->second;
  }
  // A job occupies the nodes of its allocation.
  bool JobOccupies(uint64_t job_id, const std::string& node) const override {
    const v1::JobRecord* job = FindJob(job_id);
    if (job == nullptr) return false;
    for (const v1::NodeAllocation& share : job->allocation()) {
      if (share.node() == node) return true;
    }
    return false;
  }
  // Every node but those in `unreplaceable`, up to the first of those.
  size_t RestartableWithout(
      uint64_t /*job_id*/,
      const std::vector<std::string>& nodes) const override {
    size_t count = 0;
    while (count < nodes.size() && !unreplaceable.count(nodes[count])) {
      ++count;
    }
    return count;
  }

  struct Event {
    uint64_t job_id;
    std::string node, kind, detail;
  };
  struct Restart {
    uint64_t job_id;
    std::string end_reason, detail;
  };
  void RecordEvent(uint64_t job_id, const std::string& node,
                   const std::string& kind,
                   const std::string& detail) override {
    events.push_back({job_id, node, kind, detail});
  }
  void NoteJobProgress(uint64_t job_id) override {
    progressed.push_back(job_id);
  }
  bool DrainNode(const std::string& node,
                 const std::string& /*reason*/) override {
    drained.push_back(node);
    return true;
  }
  absl::Status RestartUncharged(uint64_t job_id, const std::string& end_reason,
                                const std::string& detail) override {
    restarts.push_back({job_id, end_reason, detail});
    return absl::OkStatus();
  }

  FakeClock fake_clock;
  std::map<uint64_t, v1::JobRecord> jobs;  // the live state, by id
  std::set<uint64_t> live;                 // which of them are live
  std::set<std::string> unreplaceable;     // for RestartableWithout

  // What the feature asked for, in order.
  std::vector<Event> events;
  std::vector<uint64_t> progressed;
  std::vector<std::string> drained;
  std::vector<Restart> restarts;
};

}  // namespace gantry
