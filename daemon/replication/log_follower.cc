#include "daemon/replication/log_follower.h"

#include <thread>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "daemon/replication/replicated_batch.h"

namespace gantry::replication {

LogFollower::LogFollower(EtcdClient& etcd, ReplicationLog& log,
                         RocksDbStore& store,
                         std::function<void(uint64_t index)> on_applied)
    : etcd_(etcd),
      log_(log),
      store_(store),
      on_applied_(std::move(on_applied)) {}

std::string LogFollower::last_error() const {
  MutexLock lock(mutex_);
  return last_error_;
}

absl::Status LogFollower::Apply(ReplicationLog::Entry entry, bool sync) {
  const uint64_t expected = written_ + 1;
  if (entry.index < expected) {
    if (sync) MarkDurable();
    return absl::OkStatus();  // seen already
  }
  if (entry.index > expected) {
    return absl::FailedPreconditionError(absl::StrCat(
        "log entry ", entry.index, " arrived before entry ", expected));
  }
  StateStore::Batch batch = FromReplicated(std::move(entry.batch));
  batch.replication_index = entry.index;
  if (absl::Status written = store_.Commit(batch, sync); !written.ok()) {
    return written;
  }
  written_ = entry.index;
  if (sync) MarkDurable();
  return absl::OkStatus();
}

void LogFollower::MarkDurable() {
  // RocksDB's write-ahead log is one sequence: syncing a write makes every
  // earlier one durable too, so one sync per page (or per watch answer)
  // keeps "a crash leaves a prefix of the log applied" at a fraction of
  // the fsyncs (a standby replaying thousands of entries did one each).
  applied_.store(written_);
  if (on_applied_) on_applied_(written_);
}

absl::StatusOr<uint64_t> LogFollower::CatchUp() {
  absl::StatusOr<uint64_t> local = store_.ReplicationIndex();
  if (!local.ok()) return local.status();
  written_ = *local;
  applied_.store(*local);
  while (true) {
    absl::StatusOr<ReplicationLog::Page> page = log_.Read(written_ + 1, 256);
    if (!page.ok()) return page.status();
    caught_up_revision_ = page->revision;
    const size_t count = page->entries.size();
    for (size_t i = 0; i < count; ++i) {
      if (absl::Status applied =
              Apply(std::move(page->entries[i]), /*sync=*/i + 1 == count);
          !applied.ok()) {
        return applied;
      }
    }
    if (!page->more) return applied_.load();
  }
}

absl::Status LogFollower::Follow() {
  absl::StatusOr<uint64_t> caught_up = CatchUp();
  if (!caught_up.ok()) return caught_up.status();
  // Only this thread replaces watch_ (Stop reads it under the lock), so
  // the watch outlives the unlocked Run below.
  EtcdWatch* watch;
  {
    MutexLock lock(mutex_);
    last_error_.clear();
    if (stopping_) return absl::OkStatus();
    watch_ = etcd_.NewWatch(log_.keys().log_prefix(),
                            PrefixEnd(log_.keys().log_prefix()),
                            caught_up_revision_ + 1);
    watch = watch_.get();
  }
  absl::Status failed = absl::OkStatus();
  absl::Status watched =
      watch->Run([&](const etcdserverpb::WatchResponse& response) {
        if (!failed.ok()) return;
        std::vector<ReplicationLog::Entry> entries;
        for (const mvccpb::Event& event : response.events()) {
          if (event.type() != mvccpb::Event::PUT) continue;  // truncation
          absl::StatusOr<ReplicationLog::Entry> entry = log_.Decode(event.kv());
          // A record no controller sealed is refused (the alarm is raised)
          // and its index waits for a sealed entry: Apply takes indexes
          // only in order, so nothing is skipped.
          if (!entry.ok() && IsForged(entry.status())) continue;
          if (!entry.ok()) {
            failed = entry.status();
            watch->Cancel();
            return;
          }
          entries.push_back(std::move(*entry));
        }
        for (size_t i = 0; i < entries.size(); ++i) {
          failed =
              Apply(std::move(entries[i]), /*sync=*/i + 1 == entries.size());
          if (!failed.ok()) {
            watch->Cancel();
            return;
          }
        }
      });
  {
    MutexLock lock(mutex_);
    watch_.reset();
  }
  if (!failed.ok()) return failed;
  return watched;
}

void LogFollower::Run(const std::function<void()>& on_behind) {
  while (!stopping_) {
    absl::Status status = Follow();
    if (stopping_) break;
    if (IsBehindTruncation(status)) {
      log::Warn(
          "the log in etcd was truncated past this controller",
          {{"error", status.ToString()}, {"applied_index", applied_.load()}});
      behind_truncation_ = true;
      if (on_behind) on_behind();
      return;
    }
    if (!status.ok()) {
      log::Warn(
          "following the log in etcd failed; starting over",
          {{"error", status.ToString()}, {"applied_index", applied_.load()}});
      MutexLock lock(mutex_);
      last_error_ = std::string(status.message());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

void LogFollower::Stop() {
  stopping_ = true;
  MutexLock lock(mutex_);
  if (watch_) watch_->Cancel();
}

}  // namespace gantry::replication
