#include "agent/checkpoint_watcher.h"

#include "agent/checkpoint_markers.h"
#include "common/log.h"

namespace gantry::agent {

CheckpointWatcher::CheckpointWatcher(Reporter report, int interval_ms)
    : report_(std::move(report)), interval_ms_(interval_ms) {
  thread_ = std::thread([this] { Loop(); });
}

CheckpointWatcher::~CheckpointWatcher() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void CheckpointWatcher::Watch(uint64_t job_id, uint32_t attempt,
                              const std::string& directory) {
  std::lock_guard lock(mutex_);
  watched_[{job_id, attempt}].directory = directory;
}

void CheckpointWatcher::Forget(uint64_t job_id, uint32_t attempt) {
  std::unique_lock lock(mutex_);
  auto it = watched_.find({job_id, attempt});
  if (it == watched_.end()) return;
  Watched last = it->second;
  watched_.erase(it);
  lock.unlock();
  Poll({job_id, attempt}, last);
}

void CheckpointWatcher::Loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, std::chrono::milliseconds(interval_ms_));
    if (stopping_) break;
    // Poll outside the lock: file reads must not block Watch/Forget.
    std::map<Key, Watched> snapshot = watched_;
    lock.unlock();
    for (auto& [key, watched] : snapshot) Poll(key, watched);
    lock.lock();
    for (auto& [key, watched] : snapshot) {
      auto it = watched_.find(key);
      if (it != watched_.end()) {
        it->second.last_path = watched.last_path;
        it->second.last_error = watched.last_error;
      }
    }
  }
}

void CheckpointWatcher::Poll(const Key& key, Watched& watched) {
  absl::StatusOr<std::optional<CheckpointMarker>> marker =
      ReadCheckpointMarker(watched.directory);
  if (!marker.ok()) {
    std::string error(marker.status().message());
    if (error != watched.last_error) {
      log::Warn("ignoring a bad checkpoint marker; keeping the last good one",
                {{"job", key.first}, {"error", error}});
      watched.last_error = error;
    }
    return;
  }
  watched.last_error.clear();
  if (!marker->has_value() || (*marker)->path == watched.last_path) return;
  watched.last_path = (*marker)->path;
  v1::CheckpointReport report;
  report.set_job_id(key.first);
  report.set_attempt(key.second);
  report.set_path((*marker)->path);
  report.set_step((*marker)->step);
  report.set_source((*marker)->source);
  report_(report);
}

}  // namespace gantry::agent
