// Retention (job_retention.h): finished jobs to the history, and its
// expiry.
#include <algorithm>
#include <utility>

#include <boost/asio/post.hpp>

#include "absl/strings/str_cat.h"
#include "common/job_dependency.h"
#include "common/log.h"
#include "daemon/controller/core/controller_metrics.h"
#include "daemon/controller/core/job_lifecycle.h"
#include "daemon/controller/core/job_retention.h"
#include "daemon/controller/core/job_state_proto.h"

namespace gantry {
namespace {

constexpr int64_t kRetireIntervalMs = 1000;
// Jobs moved to the history per tick: about a millisecond of loop time each
// thousand, and their records in the next group commit.
constexpr size_t kRetirePerTick = 2000;
// History records expired per pass, and how often a pass runs when the
// last one found fewer (and the index reaches every record).
constexpr size_t kExpireBatch = 1000;
constexpr int64_t kExpireIdleIntervalMs = 60'000;
// Records stored before the expiry index, indexed per pass: whole records
// are read for it (on the history thread), a bounded amount at a time so
// that queries queued behind it wait little.
constexpr size_t kIndexRecordsPerPass = 10'000;
constexpr size_t kIndexBytesPerPass = 64 << 20;
// An array task's history is read in chunks of this many records.
constexpr size_t kHistoryChunk = 256;

v1::FairShareRecord ToRecord(const FairShare& share) {
  v1::FairShareRecord record;
  for (const auto& [user, usage] : share.users()) {
    v1::FairShareRecord::Usage& stored = (*record.mutable_users())[user];
    stored.set_value(usage.value);
    stored.set_at_ms(usage.at_ms);
  }
  record.mutable_total()->set_value(share.total().value);
  record.mutable_total()->set_at_ms(share.total().at_ms);
  return record;
}

}  // namespace

JobRetention::JobRetention(Parts parts)
    : parts_(std::move(parts)),
      retired_usage_(parts_.options.priority_weights.half_life_ms) {}

std::set<uint64_t> JobRetention::DependedJobIds() const {
  std::set<uint64_t> ids;
  for (const auto& [id, job] : parts_.state.live_jobs) {
    const std::string& text = job->record.spec().dependency();
    if (text.empty()) continue;
    absl::StatusOr<JobDependency> dependency = ParseDependency(text);
    if (!dependency.ok()) continue;
    for (const DependencyTerm& term : dependency->terms) {
      if (term.kind != DependencyTerm::Kind::kSingleton)
        ids.insert(term.job_id);
    }
  }
  return ids;
}

void JobRetention::OnTick(int64_t now) {
  if (now < next_retire_ms_) return;
  next_retire_ms_ = now + kRetireIntervalMs;
  ExpireHistory(now);
  std::optional<std::set<uint64_t>> depended;  // computed on first need
  size_t retired = 0;
  // Each entry is looked at once per tick at most: one that must stay goes
  // to the back, stamped now, which keeps the queue in time order.
  for (size_t budget = parts_.state.finished_order.size();
       budget > 0 && retired < kRetirePerTick &&
       !parts_.state.finished_order.empty();
       --budget) {
    const auto [ended_ms, id] = parts_.state.finished_order.front();
    if (ended_ms + parts_.options.min_job_age_ms > now) break;
    parts_.state.finished_order.pop_front();
    auto it = parts_.state.jobs.find(id);
    if (it == parts_.state.jobs.end()) continue;
    JobRuntime& job = it->second;
    if (!depended) depended = DependedJobIds();
    // Still holding node shares (ranks stopping), or named by a live job's
    // dependency, which reads it from memory: stays for now.
    if (parts_.state.live_jobs.count(id) > 0 || depended->count(id) > 0 ||
        (job.record.array_job_id() != 0 &&
         depended->count(job.record.array_job_id()) > 0)) {
      parts_.state.finished_order.emplace_back(now, id);
      continue;
    }
    JobLifecycle::ChargeUsage(job.record, retired_usage_);
    for (const std::unique_ptr<ControllerFeature>& feature : parts_.features) {
      feature->OnJobRetired(job.record);
    }
    if (parts_.options.metrics) {
      parts_.options.metrics->JobRetired(FromProto(job.record.state()));
    }
    parts_.on_retired(job.record);
    parts_.commits.staged().retired.push_back(std::move(job.record));
    parts_.state.jobs.erase(it);
    ++retired;
  }
  if (retired == 0) return;
  parts_.commits.staged().retired_usage = ToRecord(retired_usage_);
  for (const std::unique_ptr<ControllerFeature>& feature : parts_.features) {
    feature->SaveRetired(*parts_.commits.staged().retired_usage);
  }
  parts_.commits.AfterCommit(nullptr);
  log::Debug("finished jobs moved to the history",
             {{"jobs", retired}, {"in_memory", parts_.state.jobs.size()}});
}

void JobRetention::ExpireHistory(int64_t now) {
  if (parts_.options.history_retention_ms <= 0 || now < next_expiry_ms_ ||
      expiry_running_) {
    return;
  }
  expiry_running_ = true;
  const int64_t ended_before_ms = now - parts_.options.history_retention_ms;
  const bool queued =
      parts_.history_worker.Post([this, ended_before_ms](bool cancelled) {
        if (cancelled) return;
        absl::StatusOr<bool> indexed = parts_.store.IndexOlderHistory(
            kIndexRecordsPerPass, kIndexBytesPerPass);
        absl::StatusOr<std::vector<uint64_t>> expired =
            indexed.ok()
                ? parts_.store.ExpiredHistory(ended_before_ms, kExpireBatch)
                : absl::StatusOr<std::vector<uint64_t>>(indexed.status());
        const bool more_to_index = indexed.ok() && !*indexed;
        // The loop may run this after the controller is gone (a stop while
        // the pass was under way): `alive` says.
        boost::asio::post(
            parts_.io, [this, alive = std::weak_ptr<const int>(lifetime_),
                        expired = std::move(expired), more_to_index]() mutable {
              if (alive.expired() || stopped_) return;
              StageExpiry(std::move(expired), more_to_index);
            });
      });
  if (!queued) expiry_running_ = false;  // the next tick tries again
}

void JobRetention::StageExpiry(absl::StatusOr<std::vector<uint64_t>> expired,
                               bool more_to_index) {
  const int64_t now = parts_.clock.NowMs();
  if (!expired.ok()) {
    log::Warn("cannot read the job history to expire it",
              {{"error", expired.status().ToString()}});
    next_expiry_ms_ = now + kExpireIdleIntervalMs;
    expiry_running_ = false;
    return;
  }
  // A full batch (or older records still to index): more may be waiting,
  // look again soon.
  next_expiry_ms_ = now + (expired->size() >= kExpireBatch || more_to_index
                               ? kRetireIntervalMs
                               : kExpireIdleIntervalMs);
  if (expired->empty()) {
    expiry_running_ = false;
    return;
  }
  log::Debug("history records expired", {{"jobs", expired->size()}});
  parts_.commits.staged().expired.insert(parts_.commits.staged().expired.end(),
                                         expired->begin(), expired->end());
  // The next pass reads the index once these are gone from it.
  parts_.commits.AfterCommit([this] { expiry_running_ = false; });
}

absl::StatusOr<std::optional<v1::JobRecord>> JobRetention::RetiredJob(
    uint64_t job_id, std::optional<uint32_t> task) const {
  auto wanted = [&](const v1::JobRecord& record) {
    return task ? record.array_job_id() == job_id &&
                      record.array_task_id() == *task
                : record.id() == job_id;
  };
  // Retired in memory, not yet written.
  for (const StateStore::Batch* pending : parts_.commits.Unwritten()) {
    if (pending == nullptr) continue;
    for (const v1::JobRecord& record : pending->retired) {
      if (wanted(record)) return std::optional<v1::JobRecord>(record);
    }
  }
  uint64_t from = job_id;
  while (true) {
    absl::StatusOr<std::vector<v1::JobRecord>> chunk =
        parts_.store.HistoryJobs(from, task ? kHistoryChunk : 1);
    if (!chunk.ok()) return chunk.status();
    for (v1::JobRecord& record : *chunk) {
      if (wanted(record)) {
        return std::optional<v1::JobRecord>(std::move(record));
      }
      // Past the job, or past the array's tasks (consecutive ids).
      if (!task || record.array_job_id() != job_id) {
        return std::optional<v1::JobRecord>();
      }
    }
    if (!task || chunk->size() < kHistoryChunk) {
      return std::optional<v1::JobRecord>();
    }
    from = chunk->back().id() + 1;
  }
}

}  // namespace gantry
