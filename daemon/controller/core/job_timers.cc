// The jobs' clocks (job_timers.h).
#include "daemon/controller/core/job_timers.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "daemon/scheduler/job_deadline.h"

namespace gantry {

JobTimers::JobTimers(Parts parts) : parts_(parts) {}

void JobTimers::Check() {
  // Wall-clock time for what is a date (--deadline); every timer counts on
  // the monotonic clock, which a step of the wall clock does not move.
  const int64_t now = parts_.clock.NowMs();
  const int64_t monotonic = MonotonicMs(parts_.clock);
  // Running jobs have time limits, and pending ones with --deadline may
  // miss it; ending one changes parts_.state.timed_jobs, so walk a copy.
  std::vector<JobRuntime*> running;
  running.reserve(parts_.state.timed_jobs.size());
  for (const auto& [id, timed] : parts_.state.timed_jobs)
    running.push_back(timed);
  for (JobRuntime* runtime : running) {
    JobRuntime& job = *runtime;
    const v1::JobRecord& record = job.record;
    const bool is_running = record.state() == v1::RUNNING;
    if (MissesDeadline(now, record.spec().deadline_ms(),
                       record.spec().time_limit_seconds() * 1000, is_running)) {
      (void)parts_.lifecycle.ApplyEvent(
          job, {JobEvent::Kind::kDeadline},
          is_running ? "the job's deadline (--deadline) was reached"
                     : "the job could not end before its deadline "
                       "(--deadline)");
      continue;
    }
    if (!is_running) continue;
    if (record.steps_size() > 0) parts_.steps.CheckWaits(job, monotonic);
    const int64_t running_ms =
        job.running_for.SinceMs(record.start_time_ms(), parts_.clock);
    if (record.spec().warning_signal() != 0) {
      parts_.lifecycle.SendWarningSignal(job, running_ms);
    }
    uint64_t limit_ms = record.spec().time_limit_seconds() * 1000;
    if (limit_ms > 0 && running_ms >= static_cast<int64_t>(limit_ms)) {
      (void)parts_.lifecycle.ApplyEvent(
          job, {JobEvent::Kind::kTimeLimit},
          absl::StrCat("time limit of ", record.spec().time_limit_seconds(),
                       " s reached"));
      continue;
    }
    if (std::any_of(parts_.features.begin(), parts_.features.end(),
                    [&](const std::unique_ptr<ControllerFeature>& feature) {
                      return feature->HoldsRanks(record);
                    })) {
      continue;
    }
    int64_t hang_ms =
        static_cast<int64_t>(record.spec().hang_timeout_seconds()) * 1000;
    if (hang_ms > 0 && job.quiet_for.SinceMs(record.last_progress_ms(),
                                             parts_.clock) > hang_ms) {
      parts_.lifecycle.FailJob(
          job, FailureKind::kHang, 0, 0, false,
          absl::StrCat("no progress for ", record.spec().hang_timeout_seconds(),
                       " s (hang timeout)"),
          record.last_progress_ms());
    }
  }
  EndSilentAllocations(monotonic);
}

void JobTimers::EndSilentAllocations(int64_t monotonic_ms) {
  for (uint64_t id : parts_.allocation_liveness.TakeExpired(monotonic_ms)) {
    auto it = parts_.state.jobs.find(id);
    if (it == parts_.state.jobs.end()) continue;
    JobRuntime& job = it->second;
    const v1::JobState state = job.record.state();
    if (!job.record.spec().allocation_only() ||
        (state != v1::PENDING && state != v1::RUNNING)) {
      continue;
    }
    const std::string detail = absl::StrCat(
        "its client (srun or salloc) was not heard from for ",
        static_cast<double>(parts_.allocation_liveness.limit_ms()) / 1000,
        " s (InactiveLimit)");
    if (!parts_.lifecycle.ApplyEvent(job, {JobEvent::Kind::kClientGone}, detail)
             .ok())
      continue;
    log::Warn("allocation ended: its client is gone",
              {{"job", id},
               {"user", job.record.user()},
               {"state", v1::JobState_Name(job.record.state())},
               {"inactive_limit_ms", parts_.allocation_liveness.limit_ms()}});
  }
}

}  // namespace gantry
