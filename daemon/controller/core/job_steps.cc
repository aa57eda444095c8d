// Steps (job_steps.h): launch, task events, ends and waiters.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/crash_point.h"
#include "common/log.h"
#include "daemon/controller/core/job_steps.h"
#include "daemon/controller/core/managed_job.h"
#include "daemon/launch/step_input.h"
#include "daemon/launch/step_layout.h"
#include "daemon/launch/step_resources.h"

namespace gantry {
namespace {

// Agents run a step's command directly (LaunchRanks.exec_command); one
// that predates that runs this script, whose shell finds the program on
// the task's PATH.
constexpr char kStepWrapper[] = "#!/bin/sh\nexec \"$@\"\n";

// Ended steps kept in the job record for `gantry job` (the running ones
// are always kept).
constexpr int kEndedStepsKept = 32;

constexpr size_t kMaxStepArgvBytes = 1 << 20;
constexpr size_t kMaxStepEnvironmentBytes = 4 << 20;

v1::StepRecord* FindStep(v1::JobRecord& record, uint32_t step_id) {
  for (v1::StepRecord& step : *record.mutable_steps()) {
    if (step.id() == step_id) return &step;
  }
  return nullptr;
}

uint32_t StepTaskCount(const v1::StepRecord& step) {
  uint32_t tasks = 0;
  for (const v1::NodeAllocation& share : step.nodes()) {
    tasks += share.rank_count();
  }
  return tasks;
}

absl::Status CheckStepRequest(const v1::LaunchStepRequest& request) {
  if (request.argv().empty() || request.argv(0).empty()) {
    return absl::InvalidArgumentError("no command given for the step");
  }
  size_t argv_bytes = 0;
  for (const std::string& arg : request.argv()) argv_bytes += arg.size() + 1;
  if (argv_bytes > kMaxStepArgvBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the step's command line is ", argv_bytes,
                     " bytes; the limit is ", kMaxStepArgvBytes));
  }
  size_t env_bytes = 0;
  for (const auto& [key, value] : request.environment()) {
    env_bytes += key.size() + value.size() + 2;
  }
  if (env_bytes > kMaxStepEnvironmentBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the step's environment is ", env_bytes,
                     " bytes; the limit is ", kMaxStepEnvironmentBytes));
  }
  if (request.working_dir().empty() || request.working_dir()[0] != '/') {
    return absl::InvalidArgumentError(
        "the step's working directory must be an absolute path");
  }
  if (request.io_port() > 65535) {
    return absl::InvalidArgumentError("bad output port");
  }
  return absl::OkStatus();
}

}  // namespace

JobSteps::JobSteps(Parts parts) : parts_(parts) {}

void JobSteps::Launch(
    const v1::LaunchStepRequest& request, const Caller& caller,
    std::function<void(absl::StatusOr<v1::LaunchStepResponse>)> done) {
  absl::StatusOr<JobRuntime*> found =
      ManagedJob(parts_.state, request.job_id(), caller);
  if (!found.ok()) {
    done(found.status());
    return;
  }
  JobRuntime& job = **found;
  v1::JobRecord& record = job.record;
  if (record.state() != v1::RUNNING ||
      (request.attempt() != 0 && request.attempt() != record.attempt())) {
    done(absl::FailedPreconditionError(absl::StrCat(
        "job ", request.job_id(),
        record.state() == v1::RUNNING ? "'s attempt " : " ",
        record.state() == v1::RUNNING ? absl::StrCat(request.attempt(), " ")
                                      : "",
        "is not running; steps start only inside a running job")));
    return;
  }
  if (absl::Status valid = CheckStepRequest(request); !valid.ok()) {
    done(valid);
    return;
  }
  absl::StatusOr<std::vector<v1::NodeAllocation>> placed =
      PlaceStep(record, request);
  if (!placed.ok()) {
    done(placed.status());
    return;
  }
  uint32_t task_count = 0;
  for (const v1::NodeAllocation& share : *placed) {
    task_count += share.rank_count();
  }
  if (absl::Status input = CheckStepInput(request.input(), record, task_count);
      !input.ok()) {
    done(input);
    return;
  }
  StepResourceAsk ask;
  ask.exact = request.exact();
  ask.overlap = request.overlap();
  ask.cpus_per_task = request.cpus_per_task();
  ask.gpus_per_task = request.gpus_per_task();
  std::string busy_node;
  absl::StatusOr<bool> fits = FitStepResources(record, ask, *placed, busy_node);
  if (!fits.ok()) {
    done(fits.status());
    return;
  }
  if (!*fits) {
    // srun waits for the running steps, as Slurm's does.
    if (!request.retry_when_busy()) {
      done(absl::FailedPreconditionError(absl::StrCat(
          "Requested nodes are busy: the job's running steps hold the CPUs "
          "or GPUs this step needs on ",
          busy_node)));
      return;
    }
    v1::LaunchStepResponse busy;
    busy.set_busy(true);
    busy.set_busy_reason("Requested nodes are busy");
    done(std::move(busy));
    return;
  }
  for (const v1::NodeAllocation& share : *placed) {
    auto node = parts_.state.nodes.find(share.node());
    if (node == parts_.state.nodes.end() || !node->second.link) {
      done(absl::UnavailableError(
          absl::StrCat("node ", share.node(), " is unreachable")));
      return;
    }
  }
  // Task output goes back to the waiting gantry run, on the node it runs
  // on (the job's first node when it does not say).
  std::string io_address;
  if (request.io_port() != 0) {
    auto caller_node = parts_.state.nodes.find(request.caller_node());
    if (caller_node == parts_.state.nodes.end() && !request.io_host().empty()) {
      // srun or salloc on a host that is no node of the cluster.
      const bool v6 = request.io_host().find(':') != std::string::npos;
      io_address = absl::StrCat(v6 ? "[" : "", request.io_host(), v6 ? "]" : "",
                                ":", request.io_port());
    } else if (caller_node == parts_.state.nodes.end()) {
      caller_node = parts_.state.nodes.find(record.allocation(0).node());
    }
    if (io_address.empty() && caller_node != parts_.state.nodes.end()) {
      io_address = absl::StrCat(caller_node->second.record.address(), ":",
                                request.io_port());
    }
  }
  v1::StepRecord& step = *record.add_steps();
  step.set_io_address(io_address);
  step.set_io_token(request.io_token());
  record.set_next_step_id(std::max<uint32_t>(record.next_step_id(), 1));
  step.set_id(record.next_step_id());
  record.set_next_step_id(record.next_step_id() + 1);
  step.set_attempt(record.attempt());
  *step.mutable_argv() = request.argv();
  // srun's step name: the program's file name. Unlike the command line it
  // stays in listings (squeue -s).
  const std::string& program = request.argv(0);
  step.set_name(program.substr(program.rfind('/') + 1));
  for (v1::NodeAllocation& share : *placed) {
    job.live_ranks[share.node()] += share.rank_count();
    *step.add_nodes() = std::move(share);
  }
  step.set_start_time_ms(parts_.clock.NowMs());
  step.set_kill_on_bad_exit(request.kill_on_bad_exit());
  step.set_wait_seconds(request.wait_seconds());
  step.set_overlap(request.overlap());
  parts_.commits.StageJob(job.record);
  log::Info("step started", {{"job", record.id()},
                             {"step", step.id()},
                             {"tasks", StepTaskCount(step)},
                             {"command", request.argv(0)}});
  parts_.commits.AfterCommit(
      [this, request, step = step, done = std::move(done)] {
        CrashPoint("gantryd.step.after_commit_before_launch");
        SendLaunch(request, step);
        v1::LaunchStepResponse launched;
        *launched.mutable_step() = step;
        done(std::move(launched));
      });
}

void JobSteps::SendLaunch(const v1::LaunchStepRequest& request,
                          const v1::StepRecord& step) {
  auto it = parts_.state.jobs.find(request.job_id());
  if (it == parts_.state.jobs.end()) return;
  const v1::JobRecord& record = it->second.record;
  if (record.state() != v1::RUNNING || record.attempt() != step.attempt()) {
    return;
  }
  const std::string master_addr =
      parts_.state.nodes.at(step.nodes(0).node()).record.address();
  const StepWideEnvironment shared = StepWideEnvironmentOf(record, step);
  for (int i = 0; i < step.nodes_size(); ++i) {
    const v1::NodeAllocation& share = step.nodes(i);
    NodeRuntime& node = parts_.state.nodes.at(share.node());
    if (!node.link) continue;  // its loss fails the job
    v1::ControllerMessage message;
    v1::LaunchRanks& launch = *message.mutable_launch();
    launch.set_job_id(record.id());
    launch.set_attempt(record.attempt());
    launch.set_step(step.id());
    launch.set_job_name(record.spec().name());
    launch.set_exec_command(true);
    launch.set_script(kStepWrapper);
    *launch.mutable_script_args() = request.argv();
    launch.set_working_dir(request.working_dir());
    launch.set_output_path(record.output_path());
    launch.set_error_path(record.error_path());
    launch.set_io_address(step.io_address());
    launch.set_io_token(request.io_token());
    launch.set_pty(request.pty());
    launch.set_uid(record.uid());
    launch.set_gid(record.gid());
    launch.set_user(record.user());
    if (auto in_job = shared.job_node_index.find(share.node());
        in_job != shared.job_node_index.end()) {
      const v1::NodeAllocation& job_share =
          record.allocation(static_cast<int>(in_job->second));
      launch.set_cpus(job_share.cpus());
      launch.set_mem_mb(job_share.mem_mb());
    }
    *launch.mutable_job_environment() = request.environment();
    // The tasks get their memory directories, and a restarted attempt's
    // first launch on a node restores them (the agent does it once).
    for (const std::unique_ptr<ControllerFeature>& feature : parts_.features) {
      feature->FillLaunch(record, share.node(), launch);
    }
    for (uint32_t local = 0; local < share.rank_count(); ++local) {
      v1::RankLaunch* task = launch.add_ranks();
      task->set_rank(share.first_rank() + local);
      SetStepTaskInput(request.input(), record, step, share.node(),
                       task->rank(), *task);
      for (uint32_t gpu : StepTaskGpus(share, request.gpus_per_task(), local)) {
        task->add_gpu_indices(gpu);
      }
      for (auto& [key, value] : BuildStepTaskEnvironment(
               record, step, shared, request.gpus_per_task(), master_addr,
               static_cast<uint32_t>(i), local)) {
        (*task->mutable_environment())[key] = value;
      }
      (*task->mutable_environment())["SLURM_CLUSTER_NAME"] =
          parts_.options.cluster_name;
    }
    node.link->Send(message);
  }
}

void JobSteps::Wait(const v1::WaitStepRequest& request, const Caller& caller,
                    std::function<void(absl::StatusOr<v1::StepRecord>)> done) {
  absl::StatusOr<JobRuntime*> found =
      ManagedJob(parts_.state, request.job_id(), caller);
  if (!found.ok()) {
    done(found.status());
    return;
  }
  JobRuntime& job = **found;
  v1::StepRecord* step = FindStep(job.record, request.step_id());
  if (step == nullptr) {
    done(absl::NotFoundError(absl::StrCat("job ", request.job_id(),
                                          " has no step ", request.step_id(),
                                          " in its current attempt")));
    return;
  }
  if (step->end_time_ms() != 0) {
    done(*step);
    return;
  }
  if (request.cancel()) {
    step->set_end_detail("cancelled by gantry run");
    parts_.commits.StageJob(job.record);
    // srun's abort: Slurm's stepd says "*** STEP N.S ... CANCELLED AT".
    SendKill(job, *step, 15, v1::KillRanks::REASON_CANCELLED);
  }
  job.step_waiters[step->id()].push_back(std::move(done));
}

void JobSteps::SendKill(const JobRuntime& job, const v1::StepRecord& step,
                        int signal, v1::KillRanks::Reason reason) {
  for (const v1::NodeAllocation& share : step.nodes()) {
    auto node = parts_.state.nodes.find(share.node());
    if (node == parts_.state.nodes.end() || !node->second.link) continue;
    v1::ControllerMessage message;
    v1::KillRanks& kill = *message.mutable_kill();
    kill.set_job_id(job.record.id());
    kill.set_attempt(step.attempt());
    kill.set_step(step.id());
    kill.set_signal(signal);
    kill.set_grace_seconds(parts_.options.kill_grace_seconds);
    kill.set_reason(reason);
    node->second.link->Send(message);
  }
}

void JobSteps::OnTaskEvent(const std::string& node_name,
                           const v1::RankEvent& event) {
  auto it = parts_.state.jobs.find(event.rank().job_id());
  if (it == parts_.state.jobs.end()) return;
  JobRuntime& job = it->second;
  v1::StepRecord* step = FindStep(job.record, event.rank().step());
  if (step == nullptr || step->attempt() != event.rank().attempt()) return;
  const uint32_t task = event.rank().rank();
  for (const v1::RankExit& exit : step->exits()) {
    if (exit.rank() == task) return;  // a duplicate after reconnection
  }
  v1::RankExit* exit = step->add_exits();
  exit->set_rank(task);
  exit->set_exit_code(event.kind() == v1::RankEvent::LAUNCH_FAILED &&
                              event.exit_code() == 0
                          ? 127
                          : event.exit_code());
  exit->set_signal(event.signal());
  exit->set_node(node_name);
  if (event.kind() == v1::RankEvent::LAUNCH_FAILED) {
    exit->set_launch_error(event.message());
  }
  uint32_t& live = job.live_ranks[node_name];
  if (live > 0) --live;
  if (step->end_time_ms() == 0) {
    const bool failed = exit->exit_code() != 0 || exit->signal() != 0;
    if (event.kind() == v1::RankEvent::LAUNCH_FAILED) {
      log::Warn("step task could not start", {{"job", job.record.id()},
                                              {"step", step->id()},
                                              {"node", node_name},
                                              {"error", event.message()}});
    }
    if (!job.step_first_exit_ms.count(step->id())) {
      job.step_first_exit_ms[step->id()] = MonotonicMs(parts_.clock);
    }
    if (static_cast<uint32_t>(step->exits_size()) >= StepTaskCount(*step)) {
      EndStep(job, *step, "");
    } else if (failed && step->kill_on_bad_exit() &&
               step->end_detail().empty()) {
      step->set_end_detail(absl::StrCat("task ", task, " on ", node_name,
                                        " failed (--kill-on-bad-exit)"));
      // The step's status is the failure, not the signal that stops the
      // others because of it.
      step->set_exit_code(exit->signal() != 0 ? 128 + exit->signal()
                                              : exit->exit_code());
      SendKill(job, *step, 15);
    }
  }
  parts_.commits.StageJob(job.record);
  if (job.record.state() != v1::RUNNING) parts_.lifecycle.ReleaseFinished(job);
}

void JobSteps::EndStep(JobRuntime& job, v1::StepRecord& step,
                       const std::string& detail) {
  step.set_end_time_ms(parts_.clock.NowMs());
  if (step.exit_code() == 0) step.set_exit_code(StepExitCode(step));
  if (!detail.empty()) step.set_end_detail(detail);
  log::Info("step ended", {{"job", job.record.id()},
                           {"step", step.id()},
                           {"exit_code", step.exit_code()},
                           {"detail", step.end_detail()}});
  job.step_first_exit_ms.erase(step.id());
  auto waiters = job.step_waiters.extract(step.id());
  if (!waiters.empty()) {
    parts_.commits.AfterCommit([step, waiters = std::move(waiters.mapped())] {
      for (const auto& done : waiters) done(step);
    });
  }
  // Keep the running steps and the latest ended ones.
  auto& steps = *job.record.mutable_steps();
  int ended = 0;
  for (const v1::StepRecord& s : steps) ended += s.end_time_ms() != 0;
  for (int i = 0; i < steps.size() && ended > kEndedStepsKept;) {
    if (steps[i].end_time_ms() != 0) {
      steps.DeleteSubrange(i, 1);
      --ended;
    } else {
      ++i;
    }
  }
}

void JobSteps::EndOpenSteps(JobRuntime& job, const std::string& detail) {
  std::vector<uint32_t> open;
  for (const v1::StepRecord& step : job.record.steps()) {
    if (step.end_time_ms() == 0) open.push_back(step.id());
  }
  for (uint32_t id : open) {
    v1::StepRecord* step = FindStep(job.record, id);
    if (step != nullptr) EndStep(job, *step, detail);
  }
}

void JobSteps::CheckWaits(JobRuntime& job, int64_t monotonic_ms) {
  for (v1::StepRecord& step : *job.record.mutable_steps()) {
    if (step.end_time_ms() != 0 || step.wait_seconds() == 0 ||
        !step.end_detail().empty()) {
      continue;
    }
    auto first = job.step_first_exit_ms.find(step.id());
    if (first == job.step_first_exit_ms.end() ||
        monotonic_ms - first->second < int64_t{step.wait_seconds()} * 1000) {
      continue;
    }
    step.set_end_detail(absl::StrCat("tasks still running ",
                                     step.wait_seconds(),
                                     " s after the first ended (--wait)"));
    parts_.commits.StageJob(job.record);
    SendKill(job, step, 15);
  }
}

}  // namespace gantry
