#include "cli/run_command.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli/controller_client.h"
#include "cli/output_format.h"
#include "cli/step_options.h"
#include "cli/step_output.h"
#include "cli/version.h"

extern char** environ;

namespace gantry::cli {
namespace {

// How long gantry run keeps asking a controller that does not answer
// (restarting, say) before it gives up on the step.
constexpr auto kControllerPatience = std::chrono::minutes(5);

int Fail(const std::string& message) {
  std::cerr << "gantry run: error: " << message << "\n";
  return 1;
}

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

std::string RandomToken() {
  std::ifstream random("/dev/urandom", std::ios::binary);
  std::string bytes(16, '\0');
  random.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return absl::BytesToHexString(bytes);
}

// Says which tasks failed, as srun does ("srun: error: node1: task 3:
// Exited with exit code 2").
void ReportFailedTasks(const v1::StepRecord& step) {
  for (const v1::RankExit& exit : step.exits()) {
    if (exit.signal() != 0) {
      std::cerr << "gantry run: error: " << exit.node() << ": task "
                << exit.rank() << ": Killed by signal " << exit.signal()
                << "\n";
    } else if (exit.exit_code() != 0) {
      std::cerr << "gantry run: error: " << exit.node() << ": task "
                << exit.rank() << ": Exited with exit code " << exit.exit_code()
                << "\n";
    }
  }
  if (!step.end_detail().empty()) {
    std::cerr << "gantry run: error: step " << step.id()
              << " stopped: " << step.end_detail() << "\n";
  }
}

}  // namespace

int RunStepCommand(const std::string& controller,
                   const std::vector<std::string>& args) {
  absl::StatusOr<StepOptions> options = ParseStepOptions(args);
  if (!options.ok()) return Fail(std::string(options.status().message()));
  if (options->help) {
    std::cout << StepUsage();
    return 0;
  }
  if (options->version) {
    std::cout << kVersionLine << "\n";
    return 0;
  }
  std::string job_text = options->job_id;
  if (job_text.empty()) job_text = Env("SLURM_JOB_ID");
  if (job_text.empty()) job_text = Env("GANTRY_JOB_ID");
  uint64_t job_id = 0;
  if (job_text.empty() || !absl::SimpleAtoi(job_text, &job_id)) {
    return Fail(
        "gantry run starts a step inside a job: call it from a batch script "
        "(gantry batch / sbatch), or give --jobid of a running job of yours");
  }
  // Signals are taken by one thread (below); block them before gRPC starts
  // its threads so that none of those gets them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  // USR1/USR2 are how jobs are warned (sbatch --signal, scancel --signal
  // -f): Gantry delivers them to the step tasks itself, so gantry run must
  // not die of one and lose the tasks' output.
  ::signal(SIGUSR1, SIG_IGN);
  ::signal(SIGUSR2, SIG_IGN);

  v1::LaunchStepRequest request;
  request.set_job_id(job_id);
  // Inside the job, only its own attempt: a script left over from an
  // attempt that ended must not start steps in the next one.
  if (options->job_id.empty() || options->job_id == Env("SLURM_JOB_ID")) {
    uint32_t attempt = 0;
    if (absl::SimpleAtoi(Env("GANTRY_ATTEMPT"), &attempt)) {
      request.set_attempt(attempt);
    }
  }
  request.set_user(Env("USER"));
  for (const std::string& word : options->command) request.add_argv(word);
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    const size_t equals = text.find('=');
    if (equals == std::string_view::npos) continue;
    (*request.mutable_environment())[std::string(text.substr(0, equals))] =
        std::string(text.substr(equals + 1));
  }
  std::error_code cwd_error;
  request.set_working_dir(std::filesystem::current_path(cwd_error).string());
  request.set_nodes(options->nodes);
  request.set_ntasks(options->ntasks);
  request.set_ntasks_per_node(options->ntasks_per_node);
  request.set_cpus_per_task(options->cpus_per_task);
  request.set_gpus_per_task(options->gpus_per_task);
  for (const std::string& node : options->nodelist) request.add_nodelist(node);
  request.set_kill_on_bad_exit(options->kill_on_bad_exit);
  request.set_wait_seconds(options->wait_seconds);
  std::string caller_node = Env("GANTRY_NODENAME");
  if (caller_node.empty()) caller_node = Env("SLURMD_NODENAME");
  request.set_caller_node(caller_node);

  const std::string token = RandomToken();
  absl::StatusOr<std::unique_ptr<StepOutputServer>> output =
      StepOutputServer::Listen(token, options->label);
  if (!output.ok()) return Fail(std::string(output.status().message()));
  request.set_io_port((*output)->port());
  request.set_io_token(token);

  const std::string target = ResolveControllerTarget(controller);
  ControllerClient client(target);
  v1::LaunchStepResponse launched;
  if (absl::Status status = client.LaunchStep(request, launched);
      !status.ok()) {
    return Fail(absl::StrCat("cannot start the step in job ", job_id, ": ",
                             status.message()));
  }
  const uint32_t step_id = launched.step().id();
  const uint32_t tasks = StepTaskCount(launched.step());

  // Interrupted (Ctrl-C, scancel of the job): stop the step's tasks; the
  // wait below then sees the step end. A second signal leaves at once.
  std::thread([target, job_id, step_id, stop_signals] {
    int signal = 0;
    sigwait(&stop_signals, &signal);
    std::cerr << "gantry run: interrupted; stopping step " << step_id
              << " of job " << job_id << "\n";
    std::thread([stop_signals] {
      int again = 0;
      sigwait(&stop_signals, &again);
      std::_Exit(128 + again);
    }).detach();
    ControllerClient canceller(target);
    v1::WaitStepRequest cancel;
    cancel.set_job_id(job_id);
    cancel.set_step_id(step_id);
    cancel.set_cancel(true);
    cancel.set_user(Env("USER"));
    v1::WaitStepResponse ignored;
    (void)canceller.WaitStep(cancel, ignored, std::chrono::seconds(5));
  }).detach();

  v1::WaitStepRequest wait;
  wait.set_job_id(job_id);
  wait.set_step_id(step_id);
  wait.set_user(Env("USER"));
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
    return Fail(absl::StrCat("lost track of step ", step_id, " of job ", job_id,
                             ": ", status.message()));
  }
  (*output)->Finish(2 * tasks, std::chrono::milliseconds(1000));
  ReportFailedTasks(ended.step());
  return ended.step().exit_code();
}

}  // namespace gantry::cli
