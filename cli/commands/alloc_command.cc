#include "cli/commands/alloc_command.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "cli/client/controller_client.h"
#include "cli/commands/allocation.h"
#include "cli/commands/batch_command.h"
#include "cli/version.h"

namespace gantry::cli {
namespace {

// How often salloc checks that its allocation still stands (scancel, the
// time limit, a node failure can end it under the command).
constexpr auto kJobCheckPeriod = std::chrono::milliseconds(1000);

constexpr char kAllocUsage[] =
    R"(Usage: gantry alloc [OPTIONS] [COMMAND [ARGS...]]     (also: salloc)

Allocate a job (no batch script) and run COMMAND here, on this host, while
it holds the allocation: by default your shell ($SHELL). The command gets
the job's variables (SLURM_JOB_ID, SLURM_JOB_NODELIST, SLURM_NNODES,
SLURM_NTASKS, SLURM_CPUS_ON_NODE, ...), so srun (gantry run) inside it
starts steps on the allocation. When the command exits the allocation ends
("salloc: Relinquishing job allocation N"): COMPLETED when it exited 0,
FAILED otherwise; the exit status is the command's. Ctrl-C while waiting
for resources cancels the request. While it waits and while the command
runs, gantry alloc tells the controller it is still there; if it is killed
(kill -9, a lost login node), the controller ends the allocation after its
inactive limit (gantryd's inactive-limit setting, Slurm's InactiveLimit).

Options are sbatch's (gantry batch --help): -N/--nodes, -n/--ntasks,
--ntasks-per-node, -c/--cpus-per-task, -G/--gpus, --gpus-per-node,
--mem, -t/--time, -p/--partition, -J/--job-name, -w/--nodelist,
-x/--exclude, -C/--constraint, --exclusive, -d/--dependency, ...
  -Q, --quiet       no informational messages
  -h, --help        print this help
  -V, --version     print Gantry's version
)";

}  // namespace

int RunAllocCommand(const std::string& controller,
                    const std::vector<std::string>& args,
                    const std::string& program) {
  auto fail = [&program](const auto& message) {
    std::cerr << program << ": error: " << message << "\n";
    return 1;
  };
  absl::StatusOr<BatchInvocation> invocation = SplitBatchArguments(args);
  if (!invocation.ok()) return fail(invocation.status().message());
  AllocationAsk ask;
  ask.program = program;
  ask.announce_grant = true;
  for (const std::string& word : invocation->option_words) {
    if (word == "-h" || word == "--help") {
      std::cout << kAllocUsage;
      return 0;
    }
    if (word == "-V" || word == "--version") {
      std::cout << kVersionLine << "\n";
      return 0;
    }
    if (word == "-Q" || word == "--quiet") {
      ask.quiet = true;
      continue;
    }
    ask.option_words.push_back(word);
  }
  std::vector<std::string> command;
  if (!invocation->script_path.empty()) {
    command.push_back(invocation->script_path);
    command.insert(command.end(), invocation->script_args.begin(),
                   invocation->script_args.end());
  } else {
    const char* shell = std::getenv("SHELL");
    command.push_back(shell != nullptr && *shell != '\0' ? shell : "/bin/sh");
  }
  // As salloc: the job is named after its command.
  ask.default_name = command[0].substr(command[0].rfind('/') + 1);

  // Ctrl-C while waiting cancels the request; once the command runs, it is
  // the command's (the terminal sends it there), not ours.
  const sigset_t stop_signals = BlockStopSignals();
  // Static: the signal thread may still look at them while we exit.
  static std::atomic<bool> interrupted{false};
  static std::atomic<pid_t> child{0};
  std::thread([stop_signals] {
    while (true) {
      int signal = 0;
      if (sigwait(&stop_signals, &signal) != 0) return;
      if (child != 0) {
        // The terminal's Ctrl-C reached the command too; a kill of salloc
        // itself is passed on.
        if (signal != SIGINT) ::kill(child, signal);
        continue;
      }
      interrupted = true;
    }
  }).detach();

  const std::string target = ResolveControllerTarget(controller);
  ControllerClient client(target);
  ask.target = target;
  // The allocation can end under the command (scancel, time limit): say
  // so and stop the command, as salloc does. Its keeper hears of it, and
  // asks every second so that the command hears of it soon.
  ask.keep_interval = kJobCheckPeriod;
  ask.on_ended = [program](uint64_t job_id, const std::string&) {
    const pid_t command = child;
    if (command == 0) return;  // still waiting: AllocateJob reports it
    std::cerr << program << ": Job allocation " << job_id
              << " has been revoked.\n";
    ::kill(command, SIGHUP);
  };
  absl::StatusOr<Allocation> allocation = AllocateJob(client, ask, interrupted);
  if (absl::IsCancelled(allocation.status())) return 1;
  if (!allocation.ok()) return fail(allocation.status().message());
  const v1::JobRecord* job = &allocation->job;
  const uint64_t job_id = job->id();

  const pid_t pid = ::fork();
  if (pid < 0) {
    (void)CancelAllocation(client, job_id);
    return fail(
        absl::StrCat("cannot start ", command[0], ": ", std::strerror(errno)));
  }
  if (pid == 0) {
    for (const auto& [key, value] : AllocationEnvironment(*job)) {
      ::setenv(key.c_str(), value.c_str(), 1);
    }
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    std::vector<char*> argv;
    for (std::string& word : command) argv.push_back(word.data());
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    std::cerr << program << ": error: cannot run " << command[0] << ": "
              << std::strerror(errno) << "\n";
    std::_Exit(127);
  }
  child = pid;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // Reaped: the pid is no longer the command's to signal.
  child = 0;
  const int exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
  const int signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  if (!ask.quiet) {
    std::cerr << program << ": Relinquishing job allocation " << job_id << "\n";
  }
  if (absl::Status ended = EndAllocation(client, job_id, exit_code, signal);
      !ended.ok()) {
    std::cerr << program << ": error: cannot end job " << job_id << ": "
              << ended.message() << "\n";
  }
  return signal != 0 ? 128 + signal : exit_code;
}

}  // namespace gantry::cli
