// The job lifecycle (job_lifecycle.h): an attempt's times. Marks when
// every rank of the running attempt runs, its first progress report and its
// latest checkpoint: the times goodput.h splits a job's wall time by (the
// fault time is FailJob's). The cluster's last day of goodput is a feature
// beside the core (features/goodput/).
#include "daemon/controller/core/job_lifecycle.h"
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

void JobLifecycle::NoteRankStarted(JobRuntime& job, uint32_t attempt_number,
                                   uint32_t rank) {
  v1::AttemptRecord* attempt = OpenAttempt(job.record);
  if (attempt == nullptr || attempt->attempt() != attempt_number ||
      attempt->ranks_running_ms() != 0) {
    return;
  }
  job.started_ranks.insert(rank);
  if (job.started_ranks.size() < ScriptRankCount(job.record)) return;
  attempt->set_ranks_running_ms(parts_.clock.NowMs());
  job.started_ranks.clear();
  parts_.commits.StageJob(job.record);
}

void JobLifecycle::NoteProgress(JobRuntime& job, bool checkpoint) {
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
      parts_.commits.StageJob(job.record);
    }
    return;
  }
  const int64_t now = parts_.clock.NowMs();
  bool changed = false;
  if (attempt->first_progress_ms() == 0) {
    attempt->set_first_progress_ms(now);
    changed = true;
  }
  if (checkpoint) {
    attempt->set_last_checkpoint_ms(now);
    changed = true;
  }
  if (changed) parts_.commits.StageJob(job.record);
}

}  // namespace gantry
