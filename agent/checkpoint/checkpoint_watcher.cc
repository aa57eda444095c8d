#include "agent/checkpoint/checkpoint_watcher.h"

#include "agent/checkpoint/checkpoint_markers.h"
#include "common/log.h"

namespace gantry::agent {

CheckpointWatcher::CheckpointWatcher(Reporter report, int interval_ms,
                                     std::chrono::milliseconds read_timeout)
    : report_(std::move(report)),
      interval_ms_(interval_ms),
      read_timeout_(read_timeout) {
  thread_ = std::thread([this] { Loop(); });
}

CheckpointWatcher::~CheckpointWatcher() {
  {
    MutexLock lock(mutex_);
    stopping_ = true;
  }
  wake_.NotifyAll();
  thread_.join();
}

void CheckpointWatcher::Watch(uint64_t job_id, uint32_t attempt,
                              const std::string& directory,
                              const RankIdentity& user) {
  MutexLock lock(mutex_);
  Watched& watched = watched_[{job_id, attempt}];
  watched.directory = directory;
  watched.user = user;
  watched.forgotten = false;
}

void CheckpointWatcher::Forget(uint64_t job_id, uint32_t attempt) {
  {
    MutexLock lock(mutex_);
    auto it = watched_.find({job_id, attempt});
    if (it == watched_.end()) return;
    it->second.forgotten = true;
    final_reads_due_ = true;
  }
  // The caller (the launcher's reaper) must not wait on a user's file
  // system: the polling thread does the last read now.
  wake_.NotifyAll();
}

void CheckpointWatcher::Loop() {
  const auto interval = std::chrono::milliseconds(interval_ms_);
  auto next_poll = std::chrono::steady_clock::now() + interval;
  MutexLock lock(mutex_);
  while (!stopping_) {
    wake_.WaitUntil(lock, next_poll, [this] {
      mutex_.AssertHeld();
      return stopping_ || final_reads_due_;
    });
    if (stopping_) break;
    // Every directory when the timer is due; else only the final reads
    // (which must not hold back the timer either).
    const auto now = std::chrono::steady_clock::now();
    const bool timer_due = now >= next_poll;
    if (timer_due) next_poll = now + interval;
    final_reads_due_ = false;
    std::map<Key, Watched> snapshot;
    for (const auto& [key, watched] : watched_) {
      if (timer_due || watched.forgotten) snapshot.emplace(key, watched);
    }
    // Poll outside the lock: file reads must not block Watch/Forget.
    lock.Unlock();
    for (auto& [key, watched] : snapshot) Poll(key, watched);
    lock.Lock();
    for (auto& [key, watched] : snapshot) {
      auto it = watched_.find(key);
      if (it == watched_.end()) continue;
      // Forgotten before this read began: that was the last one (unless
      // watched anew since).
      if (watched.forgotten && it->second.forgotten) {
        watched_.erase(it);
        continue;
      }
      it->second.last_path = watched.last_path;
      it->second.last_error = watched.last_error;
    }
  }
}

void CheckpointWatcher::Poll(const Key& key, Watched& watched) {
  absl::StatusOr<std::optional<CheckpointMarker>> marker =
      ReadCheckpointMarker(watched.directory, watched.user, read_timeout_);
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
