#include "daemon/replication/log_truncator.h"

#include "common/log.h"
#include "daemon/replication/controller_members.h"
#include "daemon/replication/log_truncation_policy.h"

namespace gantry::replication {

LogTruncator::LogTruncator(EtcdClient& etcd, ReplicationLog& log,
                           Options options,
                           std::function<uint64_t()> leader_index,
                           int64_t leader_revision)
    : etcd_(etcd),
      log_(log),
      options_(std::move(options)),
      leader_index_(std::move(leader_index)),
      leader_revision_(leader_revision) {}

LogTruncator::~LogTruncator() { Stop(); }

void LogTruncator::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void LogTruncator::Stop() {
  {
    MutexLock lock(mutex_);
    stopping_ = true;
  }
  wake_.NotifyAll();
  if (thread_.joinable()) thread_.join();
}

void LogTruncator::Loop() {
  std::string last_error;
  while (true) {
    {
      MutexLock lock(mutex_);
      if (wake_.WaitFor(lock, options_.interval, [&] {
            mutex_.AssertHeld();
            return stopping_;
          })) {
        return;
      }
    }
    absl::Status pass = Pass();
    // Said once per kind of trouble, not every few seconds.
    if (!pass.ok() && pass.ToString() != last_error) {
      log::Warn("cannot truncate the log in etcd; will try again",
                {{"error", pass.ToString()}});
    }
    last_error = pass.ok() ? "" : pass.ToString();
  }
}

absl::Status LogTruncator::Pass() {
  if (!mark_read_) {
    absl::StatusOr<uint64_t> mark = log_.TruncatedThrough();
    if (!mark.ok()) return mark.status();
    truncated_through_.store(*mark);
    mark_read_ = true;
  }
  if (compact_next_ != 0) {
    // History up to the previous truncation; an error (etcd compacted past
    // it already, --auto-compaction) leaves nothing to do.
    if (absl::Status compacted = etcd_.Compact(compact_next_);
        !compacted.ok() && compacted.code() != absl::StatusCode::kOutOfRange) {
      return compacted;
    }
    compact_next_ = 0;
  }
  absl::StatusOr<std::vector<v1::ControllerMember>> members =
      ReadControllerMembers(etcd_, log_.keys(), log_.seal());
  if (!members.ok()) return members.status();
  TruncationInput input{.leader_index = leader_index_(),
                        .truncated_through = truncated_through_.load(),
                        .standby_applied = {},
                        .retain = options_.retain};
  for (const v1::ControllerMember& member : *members) {
    if (member.name() == options_.self_name) continue;
    input.standby_applied.push_back(member.applied_index());
  }
  std::optional<uint64_t> target = TruncationTarget(input);
  if (!target) return absl::OkStatus();
  absl::StatusOr<int64_t> revision = log_.Truncate(*target, leader_revision_);
  if (!revision.ok()) return revision.status();
  log::Info("truncated the log in etcd",
            {{"through", *target},
             {"previously", input.truncated_through},
             {"standbys", input.standby_applied.size()}});
  truncated_through_.store(*target);
  compact_next_ = *revision;
  return absl::OkStatus();
}

}  // namespace gantry::replication
