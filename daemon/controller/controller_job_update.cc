// Controller: what changes a job after submission besides cancel and hold:
// scontrol requeue (another run of a running or finished job) and scontrol
// update JobId=... (time limit, partition, name, GPUs per node and type). Each
// request names jobs by id or filter and gets one result per job. Runs on the
// loop.
#include "absl/strings/str_cat.h"
#include "common/option_values.h"
#include "common/request_limits.h"
#include "daemon/controller/controller.h"
#include "daemon/controller/core/gpu_type_census.h"
#include "daemon/controller/core/request_validation.h"
#include "daemon/controller/core/scheduling_input.h"
#include "daemon/controller/core/user_hold.h"

namespace gantry {
namespace {

// scontrol update Gres=: the GPUs per node and their type, for a pending
// job that asked for them per node (a job's --gpus total was spread over
// its nodes at submission; changing one part alone would leave the other
// wrong).
absl::Status UpdateGpus(const v1::UpdateJobRequest& request,
                        const v1::JobRecord& record, v1::JobSpec& updated) {
  if (record.state() != v1::PENDING) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job ", record.id(), " is ", v1::JobState_Name(record.state()),
        ": its GPUs change only while it is pending"));
  }
  if (updated.gpus() > 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "job ", record.id(), " asked for GPUs per job (--gpus=", updated.gpus(),
        "): Gres= changes GPUs per node only"));
  }
  if (request.has_gpus_per_node()) {
    if (request.gpus_per_node() > limits::kMaxGpusPerNode) {
      return absl::InvalidArgumentError(
          absl::StrCat("Gres=gpu:", request.gpus_per_node(),
                       " is above the limit of ", limits::kMaxGpusPerNode));
    }
    updated.set_gpus_per_node(request.gpus_per_node());
    // --mem-per-gpu was turned into memory per node at submission.
    if (updated.mem_per_gpu_mb() > 0) {
      const uint64_t memory =
          updated.mem_per_gpu_mb() * updated.gpus_per_node();
      if (memory == 0 || memory > limits::kMaxMemoryPerNodeMb) {
        return absl::InvalidArgumentError(absl::StrCat(
            "job ", record.id(), " asked for --mem-per-gpu: ",
            memory == 0 ? "it needs GPUs" : "more than 1 PiB per node"));
      }
      updated.set_mem_per_node_mb(memory);
    }
  }
  if (request.has_gpu_type()) updated.set_gpu_type(request.gpu_type());
  if (updated.gpus_per_node() == 0) updated.clear_gpu_type();
  if (updated.gpu_type().size() > 64) {
    return absl::InvalidArgumentError("the GPU type is too long");
  }
  return absl::OkStatus();
}

}  // namespace

void Controller::Requeue(const v1::RequeueRequest& request,
                         const Caller& caller,
                         std::function<void(v1::RequeueResponse)> done) {
  v1::RequeueResponse response;
  for (uint64_t id :
       ResolveTargets(core_.state, request.job_ids(), request.filter(),
                      *response.mutable_results())) {
    v1::CancelResult* result = response.add_results();
    JobRuntime* managed = ManagedJobFor(core_.state, id, caller, *result);
    if (managed == nullptr) continue;
    JobRuntime& job = *managed;
    const bool was_finished = IsTerminal(FromProto(job.record.state()));
    JobEvent event{JobEvent::Kind::kRequeueRequest};
    event.requeue = true;
    absl::Status status = core_.lifecycle.ApplyEvent(
        job, event, absl::StrCat("requeued by ", caller.user));
    if (!status.ok()) {
      result->set_error(absl::StrCat("job ", id, ": ", status.message()));
      continue;
    }
    v1::JobRecord& record = job.record;
    // The user asked for this run: it does not count against the job's
    // --max-restarts, as a failure's restart does.
    record.set_uncharged_attempts(record.uncharged_attempts() + 1);
    if (was_finished) {
      record.set_end_time_ms(0);
      record.set_exit_code(0);
      record.set_exit_signal(0);
      record.set_repeated_app_failures(0);
    }
    if (request.hold()) MarkHeld(record);
    core_.commits.StageJob(job.record);
    result->set_ok(true);
  }
  core_.commits.AfterCommit(
      [done = std::move(done), response = std::move(response)] {
        done(response);
      });
}

absl::Status Controller::ApplyJobUpdate(const v1::UpdateJobRequest& request,
                                        const Caller& caller, JobRuntime& job) {
  v1::JobRecord& record = job.record;
  v1::JobSpec& spec = *record.mutable_spec();
  if (IsTerminal(FromProto(record.state()))) {
    return absl::FailedPreconditionError(
        absl::StrCat("job ", record.id(), " has already finished (",
                     v1::JobState_Name(record.state()), ")"));
  }
  // Checked whole before anything changes: a refused update changes nothing.
  v1::JobSpec updated = spec;
  if (request.has_partition() && request.partition() != spec.partition()) {
    if (record.state() != v1::PENDING) {
      return absl::FailedPreconditionError(absl::StrCat(
          "job ", record.id(),
          " is running: its partition changes only while it is pending"));
    }
    const PartitionConfig* partition =
        core_.submission.FindPartition(request.partition());
    if (partition == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid partition name \"", request.partition(), "\""));
    }
    updated.set_partition(request.partition());
    if (partition->max_time_seconds > 0 &&
        (updated.time_limit_seconds() == 0 ||
         updated.time_limit_seconds() > partition->max_time_seconds) &&
        !request.has_time_limit_seconds()) {
      updated.set_time_limit_seconds(partition->max_time_seconds);
    }
  }
  if (request.has_time_limit_seconds()) {
    const uint64_t current = spec.time_limit_seconds();
    const uint64_t wanted = request.time_limit_seconds();
    const bool raises = current != 0 && (wanted == 0 || wanted > current);
    if (raises && !caller.admin) {
      // Slurm's rule: users may only shorten their jobs.
      return absl::PermissionDeniedError(absl::StrCat(
          "access denied: only an admin may raise the time limit of job ",
          record.id(), " (", FormatTimeLimit(current), ")"));
    }
    const PartitionConfig* partition =
        core_.submission.FindPartition(updated.partition());
    if (!caller.admin && partition != nullptr &&
        partition->max_time_seconds > 0 &&
        (wanted == 0 || wanted > partition->max_time_seconds)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "TimeLimit above partition ", updated.partition(), "'s MaxTime (",
          FormatTimeLimit(partition->max_time_seconds), ")"));
    }
    updated.set_time_limit_seconds(wanted);
  }
  if (request.has_name()) {
    if (request.name().empty()) {
      return absl::InvalidArgumentError("JobName= needs a name");
    }
    updated.set_name(request.name());
  }
  const bool gpus_change =
      request.has_gpus_per_node() || request.has_gpu_type();
  if (gpus_change) {
    if (absl::Status gpus = UpdateGpus(request, record, updated); !gpus.ok()) {
      return gpus;
    }
  }
  // The same bounds as at submission: text others will read, a time
  // limit the arithmetic on it can hold.
  if (absl::Status valid = ValidateJobSpecFields(updated); !valid.ok()) {
    return valid;
  }
  // A typed GPU request must stay one some node could match, in the job's
  // partition, new or not, as at submission.
  if (gpus_change || updated.partition() != spec.partition()) {
    v1::JobRecord candidate = record;
    *candidate.mutable_spec() = updated;
    if (absl::Status type = core_.submission.CheckGpuType(candidate);
        !type.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("job ", record.id(), ": ", type.message()));
    }
  }
  spec.Swap(&updated);
  return absl::OkStatus();
}

void Controller::UpdateJob(const v1::UpdateJobRequest& request,
                           const Caller& caller,
                           std::function<void(v1::UpdateJobResponse)> done) {
  v1::UpdateJobResponse response;
  bool changed_any = false;
  for (uint64_t id :
       ResolveTargets(core_.state, request.job_ids(), request.filter(),
                      *response.mutable_results())) {
    v1::CancelResult* result = response.add_results();
    JobRuntime* managed = ManagedJobFor(core_.state, id, caller, *result);
    if (managed == nullptr) continue;
    if (absl::Status status = ApplyJobUpdate(request, caller, *managed);
        !status.ok()) {
      result->set_error(std::string(status.message()));
      continue;
    }
    core_.commits.StageJob(managed->record);
    core_.commits.StageEvent(id, "", "updated",
                             absl::StrCat("updated by ", caller.user));
    changed_any = true;
    result->set_ok(true);
  }
  // A new partition or a shorter limit may let the job start now.
  if (changed_any) core_.passes.Request();
  core_.commits.AfterCommit(
      [done = std::move(done), response = std::move(response)] {
        done(response);
      });
}

}  // namespace gantry
