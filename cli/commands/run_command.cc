#include "cli/commands/run_command.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <thread>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli/client/command_support.h"
#include "cli/client/controller_client.h"
#include "cli/commands/allocation.h"
#include "cli/steps/step_input_mode.h"
#include "cli/steps/step_input_relay.h"
#include "cli/steps/step_io_files.h"
#include "cli/steps/step_options.h"
#include "cli/steps/step_output.h"
#include "cli/steps/step_terminal.h"
#include "cli/version.h"
#include "cli/views/output_format.h"
#include "common/export_environment.h"
#include "common/ids.h"

extern char** environ;

namespace gantry::cli {
namespace {

// How long gantry run keeps asking a controller that does not answer
// (restarting, say) before it gives up on the step.
constexpr auto kControllerPatience = std::chrono::minutes(5);
// How often a step that waits for the job's resources asks again.
constexpr auto kBusyRetry = std::chrono::milliseconds(500);

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

std::string RandomStepToken() {
  std::ifstream random("/dev/urandom", std::ios::binary);
  std::string bytes(16, '\0');
  random.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return absl::BytesToHexString(bytes);
}

std::string HostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

// Stops the step's tasks (srun interrupted); its wait then sees it end.
void CancelStep(ControllerClient& client, uint64_t job_id, uint32_t step_id) {
  v1::WaitStepRequest cancel;
  cancel.set_job_id(job_id);
  cancel.set_step_id(step_id);
  cancel.set_cancel(true);
  cancel.set_user(CurrentUser());
  v1::WaitStepResponse ignored;
  (void)client.WaitStep(cancel, ignored, std::chrono::seconds(5));
}

// Where srun -i's stream comes from: our stdin, or the file (a path on
// this host) that `pattern` names for the step.
absl::StatusOr<int> OpenStepInputSource(const std::string& pattern,
                                        const StepIoNames& names) {
  if (pattern.empty()) return STDIN_FILENO;
  const std::string path = ExpandStepIoPattern(pattern, names);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(absl::StrCat("cannot open input file ", path,
                                            ": ", std::strerror(errno)));
  }
  return fd;
}

class StepRun {
 public:
  StepRun(std::string program, StepOptions options)
      : program_(std::move(program)), options_(std::move(options)) {}

  int Main(const std::string& controller);

 private:
  int Fail(const std::string& message) const {
    std::cerr << program_ << ": error: " << message << "\n";
    return 1;
  }
  void Info(const std::string& message) const {
    if (!options_.quiet) std::cerr << program_ << ": " << message << "\n";
  }
  void WatchSignals(const std::string& target, sigset_t signals);
  absl::StatusOr<v1::LaunchStepRequest> BuildRequest(uint64_t job_id) const;
  // Starts the step, waiting while the job's other steps hold what it
  // needs; nullopt-like error when interrupted.
  absl::StatusOr<v1::StepRecord> Launch(ControllerClient& client,
                                        v1::LaunchStepRequest& request);
  // Says which tasks failed, as srun does ("srun: error: node1: task 3:
  // Exited with exit code 2").
  void ReportFailedTasks(const v1::StepRecord& step) const;

  const std::string program_;
  const StepOptions options_;
  std::atomic<bool> interrupted_{false};
  std::atomic<uint64_t> job_id_{0};
  std::atomic<uint32_t> step_id_{0};
};

void StepRun::WatchSignals(const std::string& target, sigset_t signals) {
  // Interrupted (Ctrl-C, scancel of the job): stop the step's tasks; the
  // wait then sees the step end. A second signal leaves at once.
  std::thread([this, target, signals] {
    int signal = 0;
    sigwait(&signals, &signal);
    interrupted_ = true;
    std::thread([signals] {
      int again = 0;
      sigwait(&signals, &again);
      std::_Exit(128 + again);
    }).detach();
    const uint32_t step_id = step_id_;
    if (step_id == 0) return;  // not started: the waits see interrupted_
    std::cerr << program_ << ": interrupted; stopping step "
              << SlurmStepNumber(step_id) << " of job " << job_id_ << "\n";
    ControllerClient canceller(target);
    CancelStep(canceller, job_id_, step_id);
  }).detach();
}

absl::StatusOr<v1::LaunchStepRequest> StepRun::BuildRequest(
    uint64_t job_id) const {
  v1::LaunchStepRequest request;
  request.set_job_id(job_id);
  // Inside the job, only its own attempt: a script left over from an
  // attempt that ended must not start steps in the next one.
  const bool inside_job =
      options_.job_id.empty() || options_.job_id == Env("SLURM_JOB_ID");
  if (inside_job) {
    uint32_t attempt = 0;
    if (absl::SimpleAtoi(Env("GANTRY_ATTEMPT"), &attempt)) {
      request.set_attempt(attempt);
    }
  }
  request.set_user(CurrentUser());
  for (const std::string& word : options_.command) request.add_argv(word);
  std::map<std::string, std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    const size_t equals = text.find('=');
    if (equals == std::string_view::npos || equals == 0) continue;
    environment[std::string(text.substr(0, equals))] =
        std::string(text.substr(equals + 1));
  }
  absl::StatusOr<std::map<std::string, std::string>> exported =
      ExportedEnvironment(options_.export_spec, environment);
  if (!exported.ok()) return exported.status();
  request.mutable_environment()->insert(exported->begin(), exported->end());
  std::error_code cwd_error;
  request.set_working_dir(std::filesystem::current_path(cwd_error).string());
  request.set_nodes(options_.nodes);
  request.set_ntasks(options_.ntasks);
  request.set_ntasks_per_node(options_.ntasks_per_node);
  request.set_cpus_per_task(options_.cpus_per_task);
  request.set_gpus_per_task(options_.gpus_per_task);
  // sbatch --ntasks-per-gpu=1: each task of a step in the job gets its own
  // GPU (CUDA_VISIBLE_DEVICES), as Slurm's implied --gpu-bind=single:1.
  // Several tasks per GPU share their node's GPUs (sbatch warned).
  if (options_.gpus_per_task == 0 && inside_job &&
      Env("SLURM_NTASKS_PER_GPU") == "1") {
    request.set_gpus_per_task(1);
  }
  for (const std::string& node : options_.nodelist) request.add_nodelist(node);
  request.set_kill_on_bad_exit(options_.kill_on_bad_exit);
  request.set_wait_seconds(options_.wait_seconds);
  request.set_exact(options_.exact);
  request.set_overlap(options_.overlap);
  request.set_retry_when_busy(true);
  std::string caller_node = Env("GANTRY_NODENAME");
  if (caller_node.empty()) caller_node = Env("SLURMD_NODENAME");
  request.set_caller_node(caller_node);
  if (caller_node.empty()) request.set_io_host(HostName());
  return request;
}

absl::StatusOr<v1::StepRecord> StepRun::Launch(ControllerClient& client,
                                               v1::LaunchStepRequest& request) {
  bool announced = false;
  while (true) {
    if (interrupted_) return absl::CancelledError("interrupted");
    v1::LaunchStepResponse launched;
    if (absl::Status status = client.LaunchStep(request, launched);
        !status.ok()) {
      return status;
    }
    if (!launched.busy()) {
      if (announced) {
        Info(absl::StrCat("Step created for StepId=", request.job_id(), ".",
                          SlurmStepNumber(launched.step().id())));
      }
      return launched.step();
    }
    if (!announced) {
      // Slurm 22.05's words, which scripts and people know.
      Info(absl::StrCat("Job ", request.job_id(),
                        " step creation temporarily disabled, retrying (",
                        launched.busy_reason(), ")"));
      announced = true;
    }
    std::this_thread::sleep_for(kBusyRetry);
  }
}

void StepRun::ReportFailedTasks(const v1::StepRecord& step) const {
  for (const v1::RankExit& exit : step.exits()) {
    if (!exit.launch_error().empty()) {
      std::cerr << program_ << ": error: " << exit.node() << ": task "
                << exit.rank() << ": " << exit.launch_error() << "\n";
    } else if (exit.signal() != 0) {
      std::cerr << program_ << ": error: " << exit.node() << ": task "
                << exit.rank() << ": Killed by signal " << exit.signal()
                << "\n";
    } else if (exit.exit_code() != 0) {
      std::cerr << program_ << ": error: " << exit.node() << ": task "
                << exit.rank() << ": Exited with exit code " << exit.exit_code()
                << "\n";
    }
  }
  if (!step.end_detail().empty()) {
    std::cerr << program_ << ": error: step " << SlurmStepNumber(step.id())
              << " stopped: " << step.end_detail() << "\n";
  }
}

int StepRun::Main(const std::string& controller) {
  absl::StatusOr<StepInputChoice> input =
      ChooseStepInput(options_.input, options_.pty);
  if (!input.ok()) return Fail(std::string(input.status().message()));
  std::string job_text = options_.job_id;
  if (job_text.empty()) job_text = Env("SLURM_JOB_ID");
  if (job_text.empty()) job_text = Env("GANTRY_JOB_ID");
  uint64_t job_id = 0;
  const bool allocate = job_text.empty();
  if (!allocate && !absl::SimpleAtoi(job_text, &job_id)) {
    return Fail(absl::StrCat("invalid job id '", job_text,
                             "' (from --jobid or $SLURM_JOB_ID)"));
  }
  // Signals are taken by one thread; block them before gRPC starts its
  // threads so that none of those gets them.
  const sigset_t stop_signals = BlockStopSignals();
  // USR1/USR2 are how jobs are warned (sbatch --signal, scancel --signal
  // -f): Gantry delivers them to the step tasks itself, so gantry run must
  // not die of one and lose the tasks' output.
  ::signal(SIGUSR1, SIG_IGN);
  ::signal(SIGUSR2, SIG_IGN);
  const std::string target = ResolveControllerTarget(controller);
  WatchSignals(target, stop_signals);
  ControllerClient client(target);

  v1::JobRecord job;
  // srun outside a job holds the allocation it made: kept alive until it
  // has ended it (finish below), after which it is dropped.
  std::unique_ptr<AllocationKeeper> keeper;
  if (allocate) {
    AllocationAsk ask;
    ask.option_words = options_.allocation_words;
    ask.default_name =
        std::filesystem::path(options_.command.front()).filename().string();
    ask.program = program_;
    ask.quiet = options_.quiet;
    ask.target = target;
    absl::StatusOr<Allocation> allocated =
        AllocateJob(client, ask, interrupted_);
    if (absl::IsCancelled(allocated.status())) return 1;
    if (!allocated.ok()) return Fail(std::string(allocated.status().message()));
    job = std::move(allocated->job);
    keeper = std::move(allocated->keeper);
    job_id = job.id();
  } else {
    v1::GetJobResponse found;
    if (client.GetJob(job_id, found).ok()) job = found.job();
    job.set_id(job_id);
  }
  job_id_ = job_id;
  // The job ends with the step when srun made it: COMPLETED or FAILED by
  // the step's status, CANCELLED when interrupted.
  auto finish = [&](int status) {
    if (!allocate) return status;
    if (interrupted_) {
      (void)CancelAllocation(client, job_id);
    } else if (absl::Status ended = EndAllocation(client, job_id, status, 0);
               !ended.ok()) {
      std::cerr << program_ << ": error: cannot end job " << job_id << ": "
                << ended.message() << "\n";
    }
    return status;
  };

  absl::StatusOr<v1::LaunchStepRequest> request = BuildRequest(job_id);
  if (!request.ok())
    return finish(Fail(std::string(request.status().message())));
  StepIoNames names;
  names.job_id = job_id;
  names.user = job.user().empty() ? CurrentUser() : job.user();
  names.job_name = job.spec().name();
  auto files = std::make_shared<StepIoFiles>(program_, options_.output,
                                             options_.error, names);
  const bool routed = !options_.output.empty() || !options_.error.empty();
  // --pty: task 0's terminal joined to ours.
  auto terminal = std::make_shared<StepTerminal>();
  // srun -i: our stdin (or a file) to the tasks that read it.
  auto relay = input->relay ? std::make_shared<StepInputRelay>() : nullptr;
  const std::string token = RandomStepToken();
  absl::StatusOr<std::unique_ptr<StepOutputServer>> output =
      StepOutputServer::Listen(
          token, options_.label, request->io_host(),
          routed ? StepOutputRouter([files](uint32_t task, int stream) {
            return files->Route(task, stream);
          })
                 : StepOutputRouter(),
          options_.pty ? StepTerminalHandler(
                             [terminal](int fd) { terminal->Attach(fd); })
                       : StepTerminalHandler(),
          relay ? StepInputHandler([relay](uint32_t task, int fd) {
            relay->Attach(task, fd);
          })
                : StepInputHandler());
  if (!output.ok()) return finish(Fail(std::string(output.status().message())));
  request->set_io_port((*output)->port());
  request->set_io_token(token);
  request->set_pty(options_.pty);
  *request->mutable_input() = input->request;

  absl::StatusOr<v1::StepRecord> step = Launch(client, *request);
  if (!step.ok()) {
    (*output)->Finish(0, std::chrono::milliseconds(0));
    if (absl::IsCancelled(step.status())) return finish(1);
    return finish(Fail(absl::StrCat("cannot start the step in job ", job_id,
                                    ": ", step.status().message())));
  }
  files->SetStep(job, *step);
  const uint32_t step_id = step->id();
  step_id_ = step_id;
  if (interrupted_) {
    // The signal came between the launch and now: stop it here.
    CancelStep(client, job_id, step_id);
  }
  const uint32_t tasks = StepTaskCount(*step);
  bool input_failed = false;
  if (relay) {
    names.step_id = SlurmStepNumber(step_id);
    absl::StatusOr<int> source =
        OpenStepInputSource(input->local_pattern, names);
    if (!source.ok()) {
      Fail(std::string(source.status().message()));
      input_failed = true;
      CancelStep(client, job_id, step_id);
    }
    const uint32_t readers =
        input->request.mode() == v1::StepInput::INPUT_ONE_TASK ? 1 : tasks;
    relay->Start(readers, source.ok() ? *source : -1,
                 source.ok() && *source != STDIN_FILENO);
  }

  v1::WaitStepRequest wait;
  wait.set_job_id(job_id);
  wait.set_step_id(step_id);
  wait.set_user(CurrentUser());
  v1::WaitStepResponse ended;
  auto unreachable_since = std::chrono::steady_clock::now();
  while (true) {
    absl::Status status =
        client.WaitStep(wait, ended, std::chrono::seconds(3600));
    if (status.ok()) break;
    if (absl::IsDeadlineExceeded(status)) continue;
    if (absl::IsUnavailable(status) &&
        std::chrono::steady_clock::now() - unreachable_since <
            kControllerPatience) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      continue;
    }
    (*output)->Finish(0, std::chrono::milliseconds(0));
    return finish(Fail(absl::StrCat("lost track of step ", step_id, " of job ",
                                    job_id, ": ", status.message())));
  }
  // A task on a terminal opens one connection, not two.
  (*output)->Finish(2 * tasks - (options_.pty && tasks > 0 ? 1 : 0),
                    std::chrono::milliseconds(1000));
  terminal->Join();
  if (relay) relay->Stop();
  // As Slurm's srun, which fails before the step when it cannot open it:
  // the tasks' ends say nothing more.
  if (input_failed) return finish(1);
  ReportFailedTasks(ended.step());
  return finish(ended.step().exit_code());
}

}  // namespace

int RunStepCommand(const std::string& controller,
                   const std::vector<std::string>& args,
                   const std::string& program) {
  absl::StatusOr<StepOptions> options = ParseStepOptions(args, program);
  if (!options.ok()) {
    std::cerr << program << ": error: " << options.status().message() << "\n";
    return 1;
  }
  if (options->help) {
    std::cout << StepUsage();
    return 0;
  }
  if (options->version) {
    std::cout << kVersionLine << "\n";
    return 0;
  }
  // Never freed: the signal thread may still use it while the process
  // exits.
  StepRun* run = new StepRun(program, *std::move(options));
  return run->Main(controller);
}

}  // namespace gantry::cli
