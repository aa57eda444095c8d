// Controller: what users do to their jobs once submitted: cancel (or
// signal), hold and release. Each request names jobs by id or by filter and
// gets one result per job. Also what a running job reports of itself:
// progress and completed checkpoints.
#include <set>

#include "absl/strings/str_cat.h"
#include "common/checkpoint_write_time.h"
#include "daemon/controller/controller.h"
#include "daemon/controller/core/job_filter.h"
#include "daemon/controller/core/user_hold.h"

namespace gantry {

void Controller::Cancel(const v1::CancelRequest& request, const Caller& caller,
                        std::function<void(v1::CancelResponse)> done) {
  v1::CancelResponse response;
  for (uint64_t id :
       ResolveTargets(core_.state, request.job_ids(), request.filter(),
                      *response.mutable_results())) {
    v1::CancelResult* result = response.add_results();
    JobRuntime* managed = ManagedJobFor(core_.state, id, caller, *result);
    if (managed == nullptr) continue;
    JobRuntime& job = *managed;
    if (request.signal() != 0) {
      // scancel --signal: the ranks get the signal, the job's state is
      // whatever they do with it.
      if (request.signal() < 1 || request.signal() > 64) {
        result->set_error(absl::StrCat("invalid signal ", request.signal()));
        continue;
      }
      if (job.record.state() != v1::RUNNING) {
        result->set_error(absl::StrCat(
            "job ", id, " is not running, so it has no ranks to signal"));
        continue;
      }
      const v1::KillRanks::Scope scope =
          request.signal_target() == v1::CancelRequest::SIGNAL_BATCH_SCRIPT
              ? v1::KillRanks::SCOPE_BATCH_SCRIPT
          : request.signal_target() == v1::CancelRequest::SIGNAL_FULL ||
                  !job.record.spec().script_once()
              ? v1::KillRanks::SCOPE_ALL
              : v1::KillRanks::SCOPE_STEP_TASKS;
      // Sent once the event is stored: a leader whose etcd lease lapsed
      // meanwhile (which sends nothing to agents) sends it when its lease
      // is confirmed, and one that lost it answers an error, not "ok".
      core_.commits.AfterCommit([this, id, signal = request.signal(), scope] {
        auto it = core_.state.jobs.find(id);
        if (it == core_.state.jobs.end() ||
            it->second.record.state() != v1::RUNNING) {
          return;
        }
        core_.lifecycle.SendKill(it->second, signal, /*signal_only=*/true,
                                 scope);
      });
      core_.commits.StageEvent(
          id, "", "signalled",
          absl::StrCat("signal ", request.signal(), " sent by ", caller.user));
      result->set_ok(true);
      continue;
    }
    // Stored with the cancel itself (sacct's "CANCELLED by UID").
    const std::optional<uint32_t> canceller =
        job.record.has_cancelled_by_uid()
            ? std::optional<uint32_t>(job.record.cancelled_by_uid())
            : std::nullopt;
    job.record.set_cancelled_by_uid(caller.uid);
    absl::Status status =
        core_.lifecycle.ApplyEvent(job, {JobEvent::Kind::kCancel},
                                   absl::StrCat("cancelled by ", caller.user));
    if (!status.ok()) {
      if (canceller) {
        job.record.set_cancelled_by_uid(*canceller);
      } else {
        job.record.clear_cancelled_by_uid();
      }
      result->set_error(absl::StrCat("job ", id, ": ", status.message()));
      continue;
    }
    result->set_ok(true);
  }
  core_.commits.AfterCommit(
      [done = std::move(done), response = std::move(response)] {
        done(response);
      });
}

void Controller::Hold(const v1::HoldRequest& request, const Caller& caller,
                      std::function<void(v1::HoldResponse)> done) {
  const char* verb = request.release() ? "release" : "hold";
  v1::HoldResponse response;
  bool released_any = false;
  for (uint64_t id :
       ResolveTargets(core_.state, request.job_ids(), request.filter(),
                      *response.mutable_results())) {
    v1::CancelResult* result = response.add_results();
    JobRuntime* managed = ManagedJobFor(core_.state, id, caller, *result);
    if (managed == nullptr) continue;
    JobRuntime& job = *managed;
    if (job.record.state() != v1::PENDING) {
      result->set_error(absl::StrCat(
          "job ", id, " is ", v1::JobState_Name(job.record.state()),
          ", not pending: only pending jobs can be held or released"));
      continue;
    }
    result->set_ok(true);
    if (job.record.held() == !request.release()) continue;  // already so
    if (request.release()) {
      MarkReleased(job.record);
      released_any = true;
    } else {
      MarkHeld(job.record);
    }
    core_.commits.StageJob(job.record);
    core_.commits.StageEvent(id, "", request.release() ? "released" : "held",
                             absl::StrCat(verb, " by ", caller.user));
  }
  if (released_any) core_.passes.Request();
  core_.commits.AfterCommit(
      [done = std::move(done), response = std::move(response)] {
        done(response);
      });
}

void Controller::ReportProgress(const v1::ReportProgressRequest& request,
                                const Caller& caller,
                                std::function<void(absl::Status)> done) {
  absl::StatusOr<JobRuntime*> found =
      ManagedJob(core_.state, request.job_id(), caller);
  if (!found.ok()) {
    done(found.status());
    return;
  }
  JobRuntime& job = **found;
  // Also while a failed attempt's ranks are stopping (they got SIGTERM and
  // the kill grace): a rank that saves its state then reports the
  // checkpoint the restart resumes from, which waits for them (Gate).
  const bool stopping = job.record.state() == v1::PENDING &&
                        job.record.attempt() > 0 && !job.occupied_nodes.empty();
  if (job.record.state() != v1::RUNNING && !stopping) {
    done(absl::FailedPreconditionError(
        absl::StrCat("job ", request.job_id(), " is not running")));
    return;
  }
  if (request.checkpoint_path().size() > 4096) {
    done(absl::InvalidArgumentError("the checkpoint path is too long"));
    return;
  }
  // Shown to the job's owner and used for its interval.
  const double write_seconds = request.checkpoint_write_seconds();
  if (!(write_seconds >= 0 && write_seconds <= kMaxCheckpointWriteSeconds)) {
    done(absl::InvalidArgumentError(
        absl::StrCat("checkpoint_write_seconds must be between 0 and ",
                     kMaxCheckpointWriteSeconds, ", not ", write_seconds)));
    return;
  }
  for (const std::unique_ptr<ControllerFeature>& feature : features_) {
    if (absl::Status status = feature->OnProgressReport(job.record, request);
        !status.ok()) {
      done(status);
      return;
    }
  }
  core_.lifecycle.RecordCheckpoint(
      job, request.checkpoint_path(), request.step(), "report",
      request.checkpoint_path().empty() ? 0 : write_seconds);
  core_.commits.AfterCommit(
      [done = std::move(done)] { done(absl::OkStatus()); });
}

}  // namespace gantry
