// Controller: goodput accounting. Marks the times of each attempt that
// goodput.h splits a job's wall time by (every rank running, the first
// progress report, the latest checkpoint; the fault time is FailJob's), and
// keeps the cluster's last day (goodput_ledger.h): the jobs in the live
// state in a tracker updated whenever a job is staged and every few
// seconds for the running and pending ones, the retired jobs in a ledger
// stored with the fair-share usage they also leave behind.
#include "common/log.h"
#include "daemon/controller/controller.h"
#include "daemon/controller/controller_metrics.h"
#include "daemon/launch/step_layout.h"

namespace gantry {
namespace {

// The attempt now running, or null.
v1::AttemptRecord* OpenAttempt(v1::JobRecord& record) {
  if (record.state() != v1::RUNNING || record.attempts_size() == 0) {
    return nullptr;
  }
  v1::AttemptRecord* attempt =
      record.mutable_attempts(record.attempts_size() - 1);
  if (attempt->attempt() != record.attempt() || attempt->end_time_ms() != 0) {
    return nullptr;
  }
  return attempt;
}

}  // namespace

void Controller::NoteRankStarted(JobRuntime& job, uint32_t attempt_number,
                                 uint32_t rank) {
  v1::AttemptRecord* attempt = OpenAttempt(job.record);
  if (attempt == nullptr || attempt->attempt() != attempt_number ||
      attempt->ranks_running_ms() != 0) {
    return;
  }
  job.started_ranks.insert(rank);
  if (job.started_ranks.size() < ScriptRankCount(job.record)) return;
  attempt->set_ranks_running_ms(clock_.NowMs());
  job.started_ranks.clear();
  StageJob(job);
}

void Controller::NoteProgress(JobRuntime& job, bool checkpoint) {
  v1::AttemptRecord* attempt = OpenAttempt(job.record);
  if (attempt == nullptr) {
    // A checkpoint that a failed attempt's ranks saved while they stopped
    // (ReportProgress takes it then): it holds their state as of the fault,
    // so nothing up to the fault is lost.
    if (!checkpoint || job.record.attempts_size() == 0 ||
        job.occupied_nodes.empty()) {
      return;
    }
    v1::AttemptRecord& last =
        *job.record.mutable_attempts(job.record.attempts_size() - 1);
    const int64_t saved_as_of =
        last.fault_time_ms() != 0 ? last.fault_time_ms() : last.end_time_ms();
    if (saved_as_of > last.last_checkpoint_ms()) {
      last.set_last_checkpoint_ms(saved_as_of);
      StageJob(job);
    }
    return;
  }
  const int64_t now = clock_.NowMs();
  bool changed = false;
  if (attempt->first_progress_ms() == 0) {
    attempt->set_first_progress_ms(now);
    changed = true;
  }
  if (checkpoint) {
    attempt->set_last_checkpoint_ms(now);
    changed = true;
  }
  if (changed) StageJob(job);
}

void Controller::UpdateGoodput(const JobRuntime& job) {
  goodput_.Update(job.record.id(), GoodputTimeline(job.record, clock_.NowMs()));
}

void Controller::RetireGoodput(uint64_t job_id) {
  retired_goodput_.Add(goodput_.Remove(job_id), 1);
}

void Controller::RestoreGoodput(const v1::GoodputLedgerRecord& retired) {
  const int64_t now = clock_.NowMs();
  goodput_.ledger().Prune(now);
  retired_goodput_.Prune(now);
  if (retired.buckets_size() > 0 && !retired_goodput_.Restore(retired)) {
    log::Warn(
        "stored goodput of retired jobs has another bucket size; "
        "the last day's figure restarts without them",
        {{"bucket_ms", retired.bucket_ms()}});
  }
  for (const auto& [id, job] : jobs_) UpdateGoodput(job);
}

void Controller::RefreshGoodput() {
  const int64_t now = clock_.NowMs();
  goodput_.ledger().Prune(now);
  retired_goodput_.Prune(now);
  for (const auto& [id, job] : live_jobs_) UpdateGoodput(*job);
  if (options_.metrics) options_.metrics->PublishGoodput(GoodputLastDay());
}

GoodputTotals Controller::GoodputLastDay() const {
  const int64_t now = clock_.NowMs();
  GoodputTotals totals = goodput_.ledger().Window(now);
  totals += retired_goodput_.Window(now);
  return totals;
}

void Controller::CountFinishedGoodput(const v1::JobRecord& record) {
  if (!options_.metrics) return;
  options_.metrics->CountFinishedGoodput(
      SumTimeline(GoodputTimeline(record, clock_.NowMs())));
}

}  // namespace gantry
