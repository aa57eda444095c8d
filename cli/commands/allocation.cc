#include "cli/commands/allocation.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/client/command_support.h"
#include "cli/commands/batch_command.h"
#include "cli/views/output_format.h"
#include "common/hostlist.h"
#include "common/job_options.h"
#include "common/job_request.h"

extern char** environ;

namespace gantry::cli {
namespace {

// A job the scheduler can place at once starts within a pass or two; only
// after this is it reported as queued (Slurm's srun says so when the
// controller does not grant the allocation in its answer).
constexpr auto kQuietWait = std::chrono::milliseconds(700);

bool Finished(v1::JobState state) {
  return state != v1::PENDING && state != v1::RUNNING;
}

}  // namespace

absl::StatusOr<Allocation> AllocateJob(ControllerClient& client,
                                       const AllocationAsk& ask,
                                       const std::atomic<bool>& interrupted) {
  JobRequest request;
  if (absl::Status status =
          ApplyJobOptions(ask.option_words, "command line", request);
      !status.ok()) {
    return status;
  }
  for (const std::string& warning : request.warnings) {
    std::cerr << ask.program << ": warning: " << warning << "\n";
  }
  if (request.job_name.empty()) request.job_name = ask.default_name;
  // The interactive client is the job; it is never run again.
  request.max_restarts = 0;
  std::error_code error;
  const std::string submit_dir = std::filesystem::current_path(error).string();
  // BuildSubmitRequest reads a script; an allocation has none.
  absl::StatusOr<v1::SubmitRequest> submit =
      BuildSubmitRequest(request, "#!/bin/sh\n", {}, submit_dir, environ);
  if (!submit.ok()) return submit.status();
  submit->mutable_spec()->clear_script();
  submit->mutable_spec()->set_allocation_only(true);
  v1::SubmitResponse response;
  if (absl::Status status = client.Submit(*submit, response); !status.ok()) {
    // An allocation whose outcome is unknown, if it was stored, ends by
    // itself: no client keeps it alive.
    return absl::Status(
        status.code(),
        absl::StrCat(IsOutcomeUnknown(status)
                         ? "Job allocation request outcome unknown (an "
                           "allocation made without us is released once "
                           "nobody keeps it): "
                         : "Job allocation request failed: ",
                     status.message()));
  }
  const uint64_t job_id = response.job_id();
  Allocation allocation;
  allocation.keeper = std::make_unique<AllocationKeeper>(
      ask.target, job_id, ask.on_ended, ask.keep_interval);
  const auto started = std::chrono::steady_clock::now();
  bool announced_wait = false;
  auto delay = std::chrono::milliseconds(50);
  while (true) {
    if (interrupted) {
      (void)CancelAllocation(client, job_id);
      std::cerr << ask.program << ": Job allocation " << job_id
                << " has been revoked.\n";
      return absl::CancelledError(
          absl::StrCat("job ", job_id, " cancelled while waiting"));
    }
    v1::GetJobResponse job;
    absl::Status status = client.GetJob(job_id, job);
    if (!status.ok() && !absl::IsUnavailable(status)) return status;
    if (status.ok() && job.job().state() == v1::RUNNING) {
      if (!ask.quiet && announced_wait) {
        std::cerr << ask.program << ": job " << job_id
                  << " has been allocated resources\n";
      }
      if (!ask.quiet && ask.announce_grant) {
        std::cerr << ask.program << ": Granted job allocation " << job_id
                  << "\n";
      }
      allocation.job = job.job();
      return allocation;
    }
    if (status.ok() && Finished(job.job().state())) {
      return absl::FailedPreconditionError(
          absl::StrCat("Job allocation ", job_id, " has been revoked",
                       job.job().reason_detail().empty()
                           ? std::string()
                           : absl::StrCat(": ", job.job().reason_detail())));
    }
    if (!announced_wait &&
        std::chrono::steady_clock::now() - started >= kQuietWait) {
      announced_wait = true;
      if (!ask.quiet) {
        std::cerr << ask.program << ": job " << job_id
                  << " queued and waiting for resources\n";
      }
    }
    std::this_thread::sleep_for(delay);
    delay = std::min(delay * 2, std::chrono::milliseconds(500));
  }
}

absl::Status EndAllocation(ControllerClient& client, uint64_t job_id,
                           int exit_code, int signal) {
  v1::EndAllocationRequest request;
  request.set_job_id(job_id);
  request.set_exit_code(exit_code);
  request.set_signal(signal);
  request.set_user(CurrentUser());
  v1::EndAllocationResponse response;
  return client.EndAllocation(request, response);
}

absl::Status CancelAllocation(ControllerClient& client, uint64_t job_id) {
  v1::CancelRequest request;
  request.add_job_ids(job_id);
  request.set_user(CurrentUser());
  v1::CancelResponse response;
  return client.Cancel(request, response);
}

sigset_t BlockStopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

std::map<std::string, std::string> AllocationEnvironment(
    const v1::JobRecord& job) {
  std::vector<std::string> nodes;
  std::vector<std::string> cpus;
  std::vector<std::string> tasks;
  uint32_t total_tasks = 0;
  for (const v1::NodeAllocation& share : job.allocation()) {
    nodes.push_back(share.node());
    cpus.push_back(absl::StrCat(share.cpus()));
    tasks.push_back(absl::StrCat(share.rank_count()));
    total_tasks += share.rank_count();
  }
  const std::string id = absl::StrCat(job.id());
  const std::string nodelist = CompressHostlist(nodes);
  const std::string node_count = absl::StrCat(nodes.size());
  std::map<std::string, std::string> env = {
      {"SLURM_JOB_ID", id},
      {"SLURM_JOBID", id},
      {"GANTRY_JOB_ID", id},
      {"SLURM_JOB_NAME", job.spec().name()},
      {"SLURM_JOB_NODELIST", nodelist},
      {"SLURM_NODELIST", nodelist},
      {"SLURM_JOB_NUM_NODES", node_count},
      {"SLURM_NNODES", node_count},
      {"SLURM_JOB_PARTITION", job.spec().partition()},
      {"SLURM_JOB_CPUS_PER_NODE", absl::StrJoin(cpus, ",")},
      {"SLURM_TASKS_PER_NODE", absl::StrJoin(tasks, ",")},
      {"SLURM_CPUS_ON_NODE", cpus.empty() ? "0" : cpus[0]},
      {"SLURM_NTASKS", absl::StrCat(total_tasks)},
      {"SLURM_NPROCS", absl::StrCat(total_tasks)},
      {"SLURM_JOB_USER", job.user()},
      {"SLURM_JOB_UID", absl::StrCat(job.uid())},
      {"SLURM_SUBMIT_DIR", job.spec().submit_dir()},
      {"SLURM_JOB_QOS", JobQos(job.spec())},
  };
  if (!job.spec().account().empty()) {
    env["SLURM_JOB_ACCOUNT"] = job.spec().account();
  }
  if (job.spec().cpus_per_task() > 1) {
    env["SLURM_CPUS_PER_TASK"] = absl::StrCat(job.spec().cpus_per_task());
  }
  if (job.spec().ntasks_per_node() > 0) {
    env["SLURM_NTASKS_PER_NODE"] = absl::StrCat(job.spec().ntasks_per_node());
  }
  if (job.spec().mem_per_node_mb() > 0) {
    env["SLURM_MEM_PER_NODE"] = absl::StrCat(job.spec().mem_per_node_mb());
  }
  if (job.spec().gpus_per_node() > 0) {
    env["SLURM_GPUS_PER_NODE"] = absl::StrCat(job.spec().gpus_per_node());
  }
  return env;
}

}  // namespace gantry::cli
