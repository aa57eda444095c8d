// Controller: allocations with no batch script (srun and salloc outside a
// job). The job starts like any other but runs nothing of its own; its
// client starts steps on it and, when done, ends it here with the status
// of its step (srun) or command (salloc), which decides COMPLETED or
// FAILED as a batch script's exit would. Runs on the controller's loop.
#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "daemon/controller/controller.h"

namespace gantry {

void Controller::EndAllocation(const v1::EndAllocationRequest& request,
                               const Caller& caller,
                               std::function<void(absl::Status)> done) {
  absl::StatusOr<JobRuntime*> found = ManagedJob(request.job_id(), caller);
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
  if (tasks_left) SendKill(job);
  const std::string who = caller.user.empty() ? "its client" : caller.user;
  if (request.exit_code() == 0 && request.signal() == 0) {
    JobEvent event{JobEvent::Kind::kRankExited};
    event.all_ranks_exited = true;
    (void)ApplyEvent(job, event,
                     absl::StrCat("allocation relinquished by ", who));
  } else {
    FailJob(job, FailureKind::kApplication, request.exit_code(),
            request.signal(), /*all_ranks_exited=*/!tasks_left,
            request.signal() != 0
                ? absl::StrCat("the allocation's command was killed by signal ",
                               request.signal())
                : absl::StrCat("the allocation's command exited with code ",
                               request.exit_code()));
  }
  log::Info("allocation ended", {{"job", record.id()},
                                 {"exit_code", request.exit_code()},
                                 {"signal", request.signal()}});
  ReleaseFinished(job);
  AfterCommit([done = std::move(done)] { done(absl::OkStatus()); });
}

}  // namespace gantry
