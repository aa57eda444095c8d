// Controller: allocations with no batch script (srun and salloc outside a
// job). The job starts like any other but runs nothing of its own; its
// client starts steps on it and, when done, ends it here with the status
// of its step (srun) or command (salloc), which decides COMPLETED or
// FAILED as a batch script's exit would. The client says it is still there
// (KeepAllocation) while it holds the allocation; one that stops (kill -9,
// a lost login node) gets its allocation ended after the inactive limit
// instead of holding nodes until the time limit. Runs on the controller's
// loop.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "daemon/controller/controller.h"

namespace gantry {

void Controller::EndAllocation(const v1::EndAllocationRequest& request,
                               const Caller& caller,
                               std::function<void(absl::Status)> done) {
  absl::StatusOr<JobRuntime*> found =
      ManagedJob(core_.state, request.job_id(), caller);
  if (!found.ok()) {
    done(found.status());
    return;
  }
  JobRuntime& job = **found;
  v1::JobRecord& record = job.record;
  if (!record.spec().allocation_only()) {
    done(absl::FailedPreconditionError(absl::StrCat(
        "job ", record.id(), " is a batch job; it ends when its script does")));
    return;
  }
  if (record.state() != v1::RUNNING) {
    // Already over (cancelled, timed out, failed with a node): nothing to
    // end, and the client's status does not rewrite how it ended.
    done(absl::OkStatus());
    return;
  }
  if (request.exit_code() < 0 || request.exit_code() > 255 ||
      request.signal() < 0 || request.signal() > 64) {
    done(absl::InvalidArgumentError(
        "the exit code must be 0 to 255 and the signal 0 to 64"));
    return;
  }
  // Tasks a client left behind (salloc's shell started steps in the
  // background) stop with the allocation.
  bool tasks_left = false;
  for (const auto& [node, live] : job.live_ranks) tasks_left |= live > 0;
  if (tasks_left) core_.lifecycle.SendKill(job);
  const std::string who = caller.user.empty() ? "its client" : caller.user;
  if (request.exit_code() == 0 && request.signal() == 0) {
    JobEvent event{JobEvent::Kind::kRankExited};
    event.all_ranks_exited = true;
    (void)core_.lifecycle.ApplyEvent(
        job, event, absl::StrCat("allocation relinquished by ", who));
  } else {
    core_.lifecycle.FailJob(
        job, FailureKind::kApplication, request.exit_code(), request.signal(),
        /*all_ranks_exited=*/!tasks_left,
        request.signal() != 0
            ? absl::StrCat("the allocation's command was killed by signal ",
                           request.signal())
            : absl::StrCat("the allocation's command exited with code ",
                           request.exit_code()));
  }
  core_.allocation_liveness.Forget(record.id());
  log::Info("allocation ended", {{"job", record.id()},
                                 {"exit_code", request.exit_code()},
                                 {"signal", request.signal()}});
  core_.lifecycle.ReleaseFinished(job);
  core_.commits.AfterCommit(
      [done = std::move(done)] { done(absl::OkStatus()); });
}

absl::StatusOr<v1::KeepAllocationResponse> Controller::KeepAllocation(
    const v1::KeepAllocationRequest& request, const Caller& caller) {
  absl::StatusOr<JobRuntime*> found =
      ManagedJob(core_.state, request.job_id(), caller);
  if (!found.ok()) return found.status();
  const v1::JobRecord& record = (*found)->record;
  if (!record.spec().allocation_only()) {
    return absl::FailedPreconditionError(
        absl::StrCat("job ", record.id(),
                     " is a batch job; only srun and salloc allocations are "
                     "kept by their client"));
  }
  v1::KeepAllocationResponse response;
  response.set_state(record.state());
  response.set_reason(record.reason());
  response.set_reason_detail(record.reason_detail());
  if (core_.allocation_liveness.enabled()) {
    // Slurm pings its clients at a third of InactiveLimit: two keepalives
    // may be lost before the third is too late.
    response.set_interval_ms(
        std::max<int64_t>(100, core_.allocation_liveness.limit_ms() / 3));
  }
  if (record.state() == v1::PENDING || record.state() == v1::RUNNING) {
    core_.allocation_liveness.Heard(record.id(), MonotonicMs(clock_));
  }
  return response;
}

}  // namespace gantry
