#include "daemon/replication/replicated_store.h"

#include <thread>

#include "absl/strings/str_cat.h"
#include "common/crash_point.h"
#include "common/log.h"
#include "daemon/replication/replicated_batch.h"

namespace gantry::replication {

ReplicatedStore::ReplicatedStore(
    RocksDbStore& local, ReplicationLog& log, Leadership& leadership,
    uint64_t next_index,
    std::function<void(const std::string& reason)> on_deposed)
    : local_(local),
      log_(log),
      leadership_(leadership),
      next_index_(next_index),
      on_deposed_(std::move(on_deposed)) {}

absl::Status ReplicatedStore::Deposed(bool unanswered_append, uint64_t index,
                                      const std::string& reason) {
  on_deposed_(reason);
  return NotCommitted(unanswered_append, index, reason);
}

absl::Status ReplicatedStore::NotCommitted(bool unanswered_append,
                                           uint64_t index,
                                           absl::string_view why) {
  // An append that got no answer may still have been committed by etcd,
  // and the next leader applies it: the batch's outcome is unknown, not a
  // failure (clients ask again with their tokens).
  if (unanswered_append) {
    return absl::UnavailableError(absl::StrCat(
        "outcome unknown: etcd did not answer the append of entry ", index,
        ", which the next leader applies if etcd committed it (", why, ")"));
  }
  return absl::FailedPreconditionError(absl::StrCat("not committed: ", why));
}

bool ReplicatedStore::PauseCommits(std::chrono::milliseconds wait) {
  MutexLock lock(pause_mutex_);
  paused_ = true;
  if (pause_changed_.WaitFor(lock, wait, [this] {
        pause_mutex_.AssertHeld();
        return !committing_;
      })) {
    return true;
  }
  paused_ = false;
  lock.Unlock();
  pause_changed_.NotifyAll();
  return false;
}

void ReplicatedStore::ResumeCommits() {
  {
    MutexLock lock(pause_mutex_);
    paused_ = false;
  }
  pause_changed_.NotifyAll();
}

absl::Status ReplicatedStore::Commit(const Batch& batch, bool sync) {
  {
    MutexLock lock(pause_mutex_);
    pause_changed_.Wait(lock, [this] {
      pause_mutex_.AssertHeld();
      return !paused_;
    });
    committing_ = true;
  }
  struct Done {
    ReplicatedStore* store;
    ~Done() {
      {
        MutexLock lock(store->pause_mutex_);
        store->committing_ = false;
      }
      store->pause_changed_.NotifyAll();
    }
  } done{this};
  const uint64_t index = next_index_.load();
  const std::string bytes = ToReplicated(batch).SerializeAsString();
  bool told = false;
  while (true) {
    if (!leadership_.is_leader()) {
      // Resigned: no renewal can come to end a wait, and nothing more may
      // be appended. Only a stop gets here (gantryd resigns once its loop
      // has stopped, so the error never reaches the Controller, which would
      // abort on it); a hand-over pauses commits before it resigns and
      // re-executes with them paused.
      return NotCommitted(told, index,
                          "this controller resigned its leadership");
    }
    if (!leadership_.Valid()) {
      // Lapsed, not lost (an etcd leader election): nothing is appended or
      // acknowledged until a renewal is answered, or the lease is lost.
      if (!leadership_.lost()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        continue;
      }
      return Deposed(told, index,
                     "this controller's etcd lease may have expired");
    }
    absl::Status appended =
        log_.Append(index, bytes, leadership_.leader_revision());
    if (appended.ok()) break;
    if (appended.code() != absl::StatusCode::kUnavailable) {
      return Deposed(told, index, std::string(appended.message()));
    }
    // No quorum (or no member reachable): nothing may be acknowledged
    // until etcd holds the batch; the lease check above ends the wait.
    etcd_answering_.store(false);
    if (!told) {
      log::Error("etcd does not answer; acknowledging nothing until it does",
                 {{"error", appended.ToString()}, {"index", index}});
      told = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  etcd_answering_.store(true);
  if (told) log::Info("etcd answers again", {{"index", index}});
  CrashPoint("gantryd.replicate.after_append_before_apply");
  absl::Status applied = local_.Commit(batch, sync, index);
  if (!applied.ok()) return applied;
  next_index_.store(index + 1);
  leadership_.SetAppliedIndex(index);
  return absl::OkStatus();
}

}  // namespace gantry::replication
