// A standby's copy of the state: reads the log in etcd from the entry after
// the last one its RocksDB holds, applies each batch with its index (synced
// once per page read, so a crash leaves a prefix of the log applied), and
// then watches the log for new entries. An entry that does not open
// (record_seal.h: forged, altered, replayed) is never applied and never
// skipped: the follower stops before it, with the alarm raised, and goes
// on only once a sealed entry holds that index (the leader replaces a
// forged value when it appends there) or the log is truncated past it
// (it then copies the leader's state). A promoted standby calls CatchUp
// once more after it has won, so it holds every entry the old leader
// appended before it takes over.
//
// Threading: Run on a thread of its own (Stop from any other), or CatchUp
// alone; applied_index() from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"
#include "daemon/replication/etcd_client.h"
#include "daemon/replication/replication_log.h"
#include "daemon/store/rocksdb_store.h"

namespace gantry::replication {

class LogFollower {
 public:
  // `on_applied` runs after each applied entry (any thread).
  LogFollower(EtcdClient& etcd, ReplicationLog& log, RocksDbStore& store,
              std::function<void(uint64_t index)> on_applied);

  // Applies every entry after the local one up to the end of the log as it
  // is now. Returns the last index applied (unchanged when none).
  // Errors: those of ReplicationLog::Read; UNAVAILABLE from RocksDB.
  absl::StatusOr<uint64_t> CatchUp();

  // CatchUp, then watch and apply, until Stop; errors are logged and the
  // follower starts over after a pause. Ends by itself when the entries it
  // needs were truncated: it cannot go on without a copy of the leader's
  // state (behind_truncation() is then true, and `on_behind` has run).
  void Run(const std::function<void()>& on_behind = {});
  void Stop();
  bool behind_truncation() const { return behind_truncation_.load(); }

  uint64_t applied_index() const { return applied_.load(); }
  // The last error, for status (empty while following).
  std::string last_error() const;

 private:
  // Writes the entry; `sync` (the last of a page or a watch answer) makes
  // it and every entry before it durable, and only then are they counted
  // as applied.
  absl::Status Apply(ReplicationLog::Entry entry, bool sync);
  void MarkDurable();
  absl::Status Follow();

  EtcdClient& etcd_;
  ReplicationLog& log_;
  RocksDbStore& store_;
  const std::function<void(uint64_t)> on_applied_;
  std::atomic<uint64_t> applied_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<bool> behind_truncation_{false};
  int64_t caught_up_revision_ = 0;  // Run's thread only
  uint64_t written_ = 0;            // Run's thread only: maybe not synced

  mutable Mutex mutex_;
  std::unique_ptr<EtcdWatch> watch_ ABSL_GUARDED_BY(mutex_);
  std::string last_error_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace gantry::replication
