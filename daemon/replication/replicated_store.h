// The leader's StateStore: each committed batch is first appended to the
// log in etcd (on a majority of its members, by a transaction only the
// current leader can make), then applied to the local RocksDB with its log
// index, and only then does the controller acknowledge what it holds. A
// controller host whose disk dies thus loses nothing a client was told.
//
// While etcd does not answer (no quorum) the commit retries, and the
// controller acknowledges nothing; while the lease cannot be vouched for
// (Leadership::Valid false: a renewal unanswered during an etcd election)
// it waits too; once the lease is lost (Leadership::lost) or the
// transaction says another controller leads, the commit fails and
// `on_deposed` runs: the controller must not act on its memory any more.
//
// A leader handing over on purpose pauses commits first (PauseCommits), so
// that nothing is appended behind the successor's back.
//
// Threading: Commit on the StoreWriter's thread, one at a time (as for
// any StateStore); reads go straight to RocksDB from any thread; Pause and
// ResumeCommits from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "common/mutex.h"
#include "daemon/replication/leadership.h"
#include "daemon/replication/replication_log.h"
#include "daemon/store/rocksdb_store.h"

namespace gantry::replication {

class ReplicatedStore final : public StateStore {
 public:
  // `next_index`: the log index of the next batch (one past the last entry,
  // which `local` already holds).
  ReplicatedStore(RocksDbStore& local, ReplicationLog& log,
                  Leadership& leadership, uint64_t next_index,
                  std::function<void(const std::string& reason)> on_deposed);

  absl::StatusOr<Snapshot> Load() override { return local_.Load(); }
  absl::Status Commit(const Batch& batch, bool sync) override;
  absl::StatusOr<v1::JobEnvironment> Environment(
      uint64_t environment_id) override {
    return local_.Environment(environment_id);
  }
  absl::StatusOr<std::vector<v1::EventRecord>> JobEvents(
      uint64_t job_id) override {
    return local_.JobEvents(job_id);
  }
  absl::StatusOr<std::vector<v1::JobRecord>> HistoryJobs(
      uint64_t first_id, size_t limit) override {
    return local_.HistoryJobs(first_id, limit);
  }
  absl::StatusOr<std::vector<uint64_t>> ExpiredHistory(int64_t ended_before_ms,
                                                       size_t limit) override {
    return local_.ExpiredHistory(ended_before_ms, limit);
  }
  // The expiry index is each replica's own bookkeeping (derived from the
  // history it holds), so its upkeep is not replicated.
  absl::StatusOr<bool> IndexOlderHistory(size_t limit_records,
                                         size_t limit_bytes) override {
    return local_.IndexOlderHistory(limit_records, limit_bytes);
  }
  std::unique_ptr<HistoryCursor> ReadHistory(
      uint64_t first_id, std::optional<uint32_t> only_uid) override {
    return local_.ReadHistory(first_id, only_uid);
  }

  // The last index appended and applied (0: none yet).
  uint64_t last_index() const { return next_index_.load() - 1; }
  // Whether etcd answered the last append attempt (false while it retries).
  bool etcd_answering() const { return etcd_answering_.load(); }
  // Returns true once no commit is under way; later ones wait
  // (acknowledging nothing) until ResumeCommits, and last_index() is final.
  // False, paused no more, when a commit is still under way after `wait`
  // (etcd does not answer it).
  bool PauseCommits(std::chrono::milliseconds wait);
  void ResumeCommits();

 private:
  // Tells the owner (which steps down) and says the batch is not
  // committed.
  absl::Status Deposed(bool unanswered_append, uint64_t index,
                       const std::string& reason);
  // Not committed for `why`; "outcome unknown" when an append of it got
  // no answer (etcd may hold it, and the next leader applies it).
  static absl::Status NotCommitted(bool unanswered_append, uint64_t index,
                                   absl::string_view why);

  RocksDbStore& local_;
  ReplicationLog& log_;
  Leadership& leadership_;
  std::atomic<uint64_t> next_index_;
  std::atomic<bool> etcd_answering_{true};
  const std::function<void(const std::string&)> on_deposed_;

  Mutex pause_mutex_;
  CondVar pause_changed_;
  bool paused_ ABSL_GUARDED_BY(pause_mutex_) = false;
  bool committing_ ABSL_GUARDED_BY(pause_mutex_) = false;
};

}  // namespace gantry::replication
