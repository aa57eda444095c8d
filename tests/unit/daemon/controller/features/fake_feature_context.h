// A FeatureContext over jobs a test sets by hand, for the features' unit
// tests (daemon/controller/controller_feature.h). What a feature asks of
// the core is recorded, not carried out, so a test can check it.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "daemon/controller/core/controller_feature.h"

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

  // Up to `free_beside` nodes.
  bool NodesFreeBeside(uint64_t /*job_id*/, uint32_t count) const override {
    return count <= free_beside;
  }

  const v1::NodeRecord* FindNode(const std::string& node) const override {
    auto it = nodes.find(node);
    return it == nodes.end() ? nullptr : &it->second;
  }
  bool NodeConnected(const std::string& node) const override {
    return nodes.count(node) > 0 && !disconnected.count(node);
  }
  void ForEachNode(const std::function<void(const v1::NodeRecord&, bool,
                                            const v1::DatasetCacheReport&)>&
                       visit) const override {
    // The core's reports outlive the call; so must these.
    static const v1::DatasetCacheReport kNone;
    for (const auto& [name, node] : nodes) {
      auto cache = dataset_caches.find(name);
      visit(node, NodeConnected(name),
            cache == dataset_caches.end() ? kNone : cache->second);
    }
  }
  boost::asio::io_context& io() override { return loop; }
  uint64_t cluster_id() const override { return 42; }
  int64_t started_ms() const override { return controller_started_ms; }

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
  void NoteJobProgress(uint64_t job_id, bool checkpoint) override {
    progressed.push_back(job_id);
    if (checkpoint) checkpointed.push_back(job_id);
  }
  bool DrainNode(const std::string& node,
                 const std::string& /*reason*/) override {
    drained.push_back(node);
    return true;
  }
  void SetJobReason(uint64_t job_id, const std::string& reason,
                    const std::string& detail) override {
    jobs[job_id].set_reason(reason);
    jobs[job_id].set_reason_detail(detail);
  }
  void UpdateCurrentAttempt(
      uint64_t job_id,
      const std::function<void(v1::AttemptRecord&)>& edit) override {
    v1::JobRecord& job = jobs[job_id];
    if (job.attempts_size() > 0) {
      edit(*job.mutable_attempts(job.attempts_size() - 1));
    }
  }
  void UpdateJob(uint64_t job_id,
                 const std::function<void(v1::JobRecord&)>& edit) override {
    if (auto it = jobs.find(job_id); it != jobs.end()) edit(it->second);
  }
  void UpdateJobUnstaged(
      uint64_t job_id,
      const std::function<void(v1::JobRecord&)>& edit) override {
    UpdateJob(job_id, edit);
  }
  // Kept until the test commits them (Commit).
  void AfterCommit(std::function<void()> action) override {
    after_commit.push_back(std::move(action));
  }
  std::vector<std::string> LeafSwitchesOf(
      const std::string& node) const override {
    auto it = leaf_switches.find(node);
    return it == leaf_switches.end() ? std::vector<std::string>{} : it->second;
  }
  // What is staged is durable: runs the AfterCommit actions.
  void Commit() {
    std::vector<std::function<void()>> actions;
    actions.swap(after_commit);
    for (std::function<void()>& action : actions) action();
  }
  bool SendToNode(const std::string& node,
                  const v1::ControllerMessage& message) override {
    if (!NodeConnected(node)) return false;
    sent.emplace_back(node, message);
    return true;
  }
  void ReleaseLaunch(uint64_t job_id) override {
    released.push_back(job_id);
    jobs[job_id].set_reason("None");
  }
  void RequeueUnstarted(uint64_t job_id, const std::string& detail, bool hold,
                        const std::string& reason,
                        const std::string& reason_detail) override {
    requeued.push_back({job_id, detail, hold, reason, reason_detail});
    // As the core's state machine does: the attempt ends, the job waits.
    v1::JobRecord& job = jobs[job_id];
    job.set_state(v1::PENDING);
    if (job.attempts_size() > 0) {
      job.mutable_attempts(job.attempts_size() - 1)->set_end_time_ms(1);
    }
  }
  void RequestSchedule() override { ++schedules_requested; }
  // Recorded; a test calls the feature's OnWake itself when it is due.
  void WakeAfter(ControllerFeature& /*feature*/, int64_t delay_ms) override {
    wakes.push_back(delay_ms);
  }
  absl::Status RestartUncharged(uint64_t job_id, const std::string& end_reason,
                                const std::string& detail) override {
    restarts.push_back({job_id, end_reason, detail});
    return absl::OkStatus();
  }

  FakeClock fake_clock;
  std::map<uint64_t, v1::JobRecord> jobs;       // the live state, by id
  std::set<uint64_t> live;                      // which of them are live
  std::set<std::string> unreplaceable;          // for RestartableWithout
  uint32_t free_beside = 0;                     // for NodesFreeBeside
  std::map<std::string, v1::NodeRecord> nodes;  // by name
  std::set<std::string> disconnected;           // of those
  // Node -> its agent's last cache report (none: empty).
  std::map<std::string, v1::DatasetCacheReport> dataset_caches;
  boost::asio::io_context loop;  // for a feature's own timers
  int64_t controller_started_ms = 0;
  // Node -> its leaf switches (none: no switch tree).
  std::map<std::string, std::vector<std::string>> leaf_switches;

  // What the feature asked for, in order.
  std::vector<Event> events;
  std::vector<uint64_t> progressed;
  std::vector<uint64_t> checkpointed;  // progress with a new checkpoint
  std::vector<std::function<void()>> after_commit;  // not yet run
  std::vector<std::string> drained;
  std::vector<Restart> restarts;
  struct Requeue {
    uint64_t job_id;
    std::string detail;
    bool hold;
    std::string reason, reason_detail;
  };
  std::vector<std::pair<std::string, v1::ControllerMessage>> sent;
  std::vector<uint64_t> released;
  std::vector<Requeue> requeued;
  int schedules_requested = 0;
  std::vector<int64_t> wakes;  // delays asked for, in order
};

}  // namespace gantry
