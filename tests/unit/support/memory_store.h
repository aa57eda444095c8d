// A StateStore in memory that keeps what RocksDbStore keeps (live jobs,
// nodes, history, events, environments, counters), for tests and fuzz targets
// that drive the real Controller without a database.
//
// Thread-safe: every method takes the store's mutex (the controller
// commits from its StoreWriter thread).
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "daemon/store/state_store.h"

namespace gantry {

// A store in memory with a history, as RocksDbStore keeps it.
class MemoryStore : public StateStore {
 public:
  absl::StatusOr<Snapshot> Load() override {
    std::lock_guard lock(mutex_);
    Snapshot snapshot;
    for (const auto& [id, job] : jobs_) snapshot.jobs.push_back(job);
    for (const auto& [name, node] : nodes_) snapshot.nodes.push_back(node);
    snapshot.next_job_id = next_job_id_;
    snapshot.next_event_sequence = next_event_sequence_;
    snapshot.cluster_id = 7;
    snapshot.retired_usage = retired_usage_;
    snapshot.topology = topology_;
    return snapshot;
  }

  absl::Status Commit(const Batch& batch, bool /*sync*/) override {
    std::lock_guard lock(mutex_);
    for (const v1::JobRecord& job : batch.jobs) jobs_[job.id()] = job;
    for (const v1::NodeRecord& node : batch.nodes) nodes_[node.name()] = node;
    for (const v1::EventRecord& event : batch.events) events_.push_back(event);
    for (const v1::JobRecord& job : batch.retired) {
      jobs_.erase(job.id());
      history_[job.id()] = job;
    }
    for (uint64_t id : batch.expired) history_.erase(id);
    for (const auto& [id, environment] : batch.environments) {
      environments_[id] = environment;
    }
    if (batch.retired_usage) retired_usage_ = batch.retired_usage;
    if (batch.topology) topology_ = batch.topology;
    if (batch.next_job_id) next_job_id_ = *batch.next_job_id;
    if (batch.next_event_sequence) {
      next_event_sequence_ = *batch.next_event_sequence;
    }
    return absl::OkStatus();
  }

  absl::StatusOr<v1::JobEnvironment> Environment(uint64_t id) override {
    std::lock_guard lock(mutex_);
    auto it = environments_.find(id);
    if (it == environments_.end()) return v1::JobEnvironment();
    return it->second;
  }

  absl::StatusOr<std::vector<v1::EventRecord>> JobEvents(
      uint64_t job_id) override {
    std::lock_guard lock(mutex_);
    std::vector<v1::EventRecord> events;
    for (const v1::EventRecord& event : events_) {
      if (event.job_id() == job_id) events.push_back(event);
    }
    return events;
  }

  absl::StatusOr<std::vector<v1::JobRecord>> HistoryJobs(
      uint64_t first_id, size_t limit) override {
    std::lock_guard lock(mutex_);
    std::vector<v1::JobRecord> jobs;
    for (auto it = history_.lower_bound(first_id);
         it != history_.end() && jobs.size() < limit; ++it) {
      jobs.push_back(it->second);
    }
    return jobs;
  }

  absl::StatusOr<std::vector<uint64_t>> ExpiredHistory(int64_t ended_before_ms,
                                                       size_t limit) override {
    std::lock_guard lock(mutex_);
    std::vector<std::pair<int64_t, uint64_t>> ended;
    for (const auto& [id, job] : history_) {
      if (job.end_time_ms() < ended_before_ms) {
        ended.emplace_back(job.end_time_ms(), id);
      }
    }
    std::sort(ended.begin(), ended.end());
    std::vector<uint64_t> expired;
    for (size_t i = 0; i < ended.size() && i < limit; ++i) {
      expired.push_back(ended[i].second);
    }
    return expired;
  }

  // A copy of the history, read as RocksDbStore's cursor reads its
  // snapshot.
  std::unique_ptr<HistoryCursor> ReadHistory(
      uint64_t first_id, std::optional<uint32_t> only_uid) override {
    class Copy final : public HistoryCursor {
     public:
      Copy(std::map<uint64_t, v1::JobRecord> records,
           std::optional<uint32_t> only_uid)
          : records_(std::move(records)),
            next_(records_.begin()),
            only_uid_(only_uid) {}
      absl::StatusOr<std::optional<Entry>> Next() override {
        if (next_ == records_.end()) return std::optional<Entry>();
        Entry entry;
        entry.id = next_->first;
        entry.bytes = next_->second.ByteSizeLong();
        if (!only_uid_ || next_->second.uid() == *only_uid_) {
          entry.record = next_->second;
        }
        ++next_;
        return entry;
      }

     private:
      std::map<uint64_t, v1::JobRecord> records_;
      std::map<uint64_t, v1::JobRecord>::const_iterator next_;
      const std::optional<uint32_t> only_uid_;
    };
    std::lock_guard lock(mutex_);
    return std::make_unique<Copy>(
        std::map<uint64_t, v1::JobRecord>(history_.lower_bound(first_id),
                                          history_.end()),
        only_uid);
  }

  // A record as an earlier gantryd left it, read by the next Load.
  void Preload(const v1::JobRecord& job) {
    std::lock_guard lock(mutex_);
    jobs_[job.id()] = job;
    next_job_id_ = std::max(next_job_id_, job.id() + 1);
  }

  size_t live_records() {
    std::lock_guard lock(mutex_);
    return jobs_.size();
  }
  bool in_history(uint64_t id) {
    std::lock_guard lock(mutex_);
    return history_.count(id) > 0;
  }

 private:
  std::mutex mutex_;
  std::map<uint64_t, v1::JobRecord> jobs_;
  std::map<uint64_t, v1::JobRecord> history_;
  std::map<std::string, v1::NodeRecord> nodes_;
  std::vector<v1::EventRecord> events_;
  std::map<uint64_t, v1::JobEnvironment> environments_;
  std::optional<v1::FairShareRecord> retired_usage_;
  std::optional<v1::TopologyRecord> topology_;
  uint64_t next_job_id_ = 1;
  uint64_t next_event_sequence_ = 1;
};

}  // namespace gantry
