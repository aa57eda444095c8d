// gantry: the command-line client. Parses the command and hands it to the
// command's cli/*_command.cc.
#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "absl/status/statusor.h"
#include "cli/client/client_config.h"
#include "cli/command_table.h"
#include "cli/commands/accounting_commands.h"
#include "cli/commands/alloc_command.h"
#include "cli/commands/attach_command.h"
#include "cli/commands/batch_command.h"
#include "cli/commands/batch_stream_command.h"
#include "cli/commands/cache_command.h"
#include "cli/commands/cancel_command.h"
#include "cli/commands/drain_command.h"
#include "cli/commands/handover_command.h"
#include "cli/commands/hold_command.h"
#include "cli/commands/hostlist_command.h"
#include "cli/commands/hostnames_command.h"
#include "cli/commands/job_command.h"
#include "cli/commands/nodes_command.h"
#include "cli/commands/progress_command.h"
#include "cli/commands/queue_command.h"
#include "cli/commands/run_command.h"
#include "cli/commands/scontrol_command.h"
#include "cli/commands/status_command.h"
#include "cli/commands/topology_command.h"
#include "cli/precheck.h"
#include "cli/slurm/scontrol_alias.h"
#include "cli/slurm/slurm_alias.h"
#include "cli/version.h"
#include "common/controller_targets.h"
#include "common/tls_credentials.h"

namespace {

// --tls-ca and --tls-server-name become the environment the controller
// client reads (common/tls_credentials.h), which a submitted job's
// exported environment then carries too.
bool SetTlsVariable(const std::string& word, const char* next, int& consumed) {
  for (const auto& [flag, variable] :
       {std::pair{std::string("--tls-ca"), gantry::kTlsCaVariable},
        std::pair{std::string("--tls-server-name"),
                  gantry::kTlsServerNameVariable}}) {
    if (word == flag && next != nullptr) {
      setenv(variable, next, 1);
      consumed = 2;
      return true;
    }
    if (word.rfind(flag + "=", 0) == 0) {
      setenv(variable, word.substr(flag.size() + 1).c_str(), 1);
      consumed = 1;
      return true;
    }
  }
  return false;
}

// `gantry [--controller ADDR] [--tls-ca FILE] batch|run ARGS...` is routed
// before CLI11 sees it: their arguments follow sbatch's and srun's grammar
// (options, then a script or command and its arguments).
bool RouteBatch(int argc, char** argv, std::string& controller,
                std::string& command, std::vector<std::string>& batch_args) {
  int i = 1;
  while (i < argc) {
    std::string word(argv[i]);
    int consumed = 0;
    if (SetTlsVariable(word, i + 1 < argc ? argv[i + 1] : nullptr, consumed)) {
      i += consumed;
    } else if (word == "--controller" && i + 1 < argc) {
      controller = argv[i + 1];
      i += 2;
    } else if (word.rfind("--controller=", 0) == 0) {
      controller = word.substr(13);
      ++i;
    } else {
      break;
    }
  }
  if (i >= argc) return false;
  command = argv[i];
  batch_args.assign(argv + i + 1, argv + argc);
  return command == "batch" || command == "run";
}

// The name messages go under: the Slurm command this runs as (srun,
// salloc), else "gantry SUBCOMMAND".
std::string ProgramName(const char* argv0, const std::string& subcommand) {
  std::string program = argv0;
  program = program.substr(program.rfind('/') + 1);
  if (program == "srun" || program == "salloc" || program == "sattach") {
    return program;
  }
  return "gantry " + subcommand;
}

int RunCommandLine(int argc, char** argv) {
  const std::string invoked_as = argv[0];
  // Run as sbatch/squeue/scancel/sinfo/scontrol (links from
  // gantry-slurm-compat): rewrite the words to the gantry subcommand before
  // anything parses them.
  std::string invoked = argv[0];
  invoked = invoked.substr(invoked.rfind('/') + 1);
  if (invoked == "scontrol" &&
      gantry::cli::WantsScontrolHelp({argv, argv + argc})) {
    std::cout << gantry::cli::ScontrolUsage();
    return 0;
  }
  std::vector<std::string> alias_notes;
  absl::StatusOr<std::vector<std::string>> expanded =
      gantry::cli::ExpandSlurmAlias({argv, argv + argc}, alias_notes);
  for (const std::string& note : alias_notes) {
    std::cerr << invoked << ": " << note << "\n";
  }
  if (!expanded.ok()) {
    std::string program = argv[0];
    program = program.substr(program.rfind('/') + 1);
    std::cerr << program << ": error: " << expanded.status().message() << "\n";
    return 1;
  }
  // The login host's [client] settings (controller address, TLS), below
  // the environment and the flags.
  if (absl::Status config = gantry::cli::ApplyClientConfig(); !config.ok()) {
    std::string program = argv[0];
    program = program.substr(program.rfind('/') + 1);
    std::cerr << program << ": error: " << config.message() << "\n";
    return 1;
  }
  std::vector<std::string> words = *std::move(expanded);
  std::vector<char*> word_pointers;
  for (std::string& word : words) word_pointers.push_back(word.data());
  word_pointers.push_back(nullptr);
  argc = static_cast<int>(words.size());
  argv = word_pointers.data();
  {
    std::string controller;
    std::string command;
    std::vector<std::string> args;
    if (RouteBatch(argc, argv, controller, command, args) && command == "run") {
      return gantry::cli::RunStepCommand(
          controller, args, ProgramName(invoked_as.c_str(), "run"));
    }
    if (command == "attach") {
      return gantry::cli::RunAttachCommand(
          controller, args, ProgramName(invoked_as.c_str(), "attach"));
    }
    if (command == "alloc") {
      return gantry::cli::RunAllocCommand(
          controller, args, ProgramName(invoked_as.c_str(), "alloc"));
    }
    // sacct, sreport, sprio, sshare, sdiag: Slurm's option grammar.
    if (gantry::cli::IsAccountingCommand(command)) {
      return gantry::cli::RunAccountingCommand(
          command, invoked.rfind("gantry", 0) == 0 ? "gantry" : invoked,
          controller, args);
    }
    if (command == "batch-stream") {
      for (const std::string& arg : args) {
        if (arg == "--help" || arg == "-h") {
          std::cout << gantry::cli::kBatchStreamHelp;
          return 0;
        }
      }
      return gantry::cli::RunBatchStreamCommand(args, controller);
    }
    if (!command.empty() && command == "batch") {
      for (const std::string& arg : args) {
        if (arg == "--help" || arg == "-h") {
          std::cout << gantry::cli::kBatchHelp;
          return 0;
        }
        if (!arg.empty() && arg[0] != '-') break;
      }
      return gantry::cli::RunBatchCommand(args, controller);
    }
  }
  CLI::App app{
      "gantry: submit and watch jobs on a Gantry cluster.\n"
      "Slurm users: batch=sbatch, queue=squeue, cancel=scancel, "
      "job=scontrol show job, nodes=sinfo."};
  app.require_subcommand(1);
  app.set_version_flag("--version", gantry::cli::kVersionLine);
  std::string controller;
  app.add_option("--controller", controller,
                 "gantryd address: unix:PATH or HOST:PORT (default: "
                 "$GANTRY_CONTROLLER, else controller in the [client] table "
                 "of /etc/gantry/gantry.toml ($GANTRY_CONFIG), else "
                 "unix:/run/gantry/gantryd.sock)");
  app.add_option_function<std::string>(
         "--tls-ca",
         [](const std::string& path) {
           setenv(gantry::kTlsCaVariable, path.c_str(), 1);
         },
         "CA file (PEM) that signed gantryd's certificate: TLS to a "
         "HOST:PORT controller (default: $GANTRY_TLS_CA; none: plain TCP)")
      ->option_text("FILE");
  app.add_option_function<std::string>(
         "--tls-server-name",
         [](const std::string& name) {
           setenv(gantry::kTlsServerNameVariable, name.c_str(), 1);
         },
         "Name gantryd's certificate must carry, when not the host of "
         "--controller (default: $GANTRY_TLS_SERVER_NAME)")
      ->option_text("NAME");
  app.fallthrough();

  // Only for --help listings: RouteBatch handles the commands themselves.
  app.add_subcommand("batch",
                     "Submit a batch script (sbatch); see gantry batch --help");
  app.add_subcommand("batch-stream",
                     "Submit many batch jobs, one per line of standard "
                     "input, on one connection; see gantry batch-stream "
                     "--help");
  app.add_subcommand("alloc",
                     "Allocate a job and run a shell or command here in it "
                     "(salloc); see gantry alloc --help");
  app.add_subcommand("attach",
                     "Print a running step's output from another terminal "
                     "(sattach); see gantry attach --help");
  app.add_subcommand("run",
                     "Run a command as a job step: inside a job on its "
                     "allocation, outside one on a job allocated for it "
                     "(srun); see gantry run --help");

  app.add_subcommand("acct",
                     "Accounting of running and finished jobs (sacct); see "
                     "gantry acct --help");
  app.add_subcommand("stat", "CPU time and memory of running jobs (sstat)");
  app.add_subcommand("report",
                     "Usage of the cluster over a period, by user (sreport)");
  app.add_subcommand("prio", "Priority factors of pending jobs (sprio)");
  app.add_subcommand("share", "Fair-share usage per user (sshare)");
  app.add_subcommand("diag", "gantryd's job and scheduling counters (sdiag)");

  // Each command adds its subcommand and options in its own file; this
  // order is --help's.
  gantry::cli::CommandTable commands(app);
  for (auto add_command :
       {gantry::cli::AddQueueCommand, gantry::cli::AddCancelCommand,
        gantry::cli::AddHoldCommands, gantry::cli::AddJobCommand,
        gantry::cli::AddNodesCommand, gantry::cli::AddHostnamesCommand,
        gantry::cli::AddHostlistCommand, gantry::cli::AddStatusCommand,
        gantry::cli::AddProgressCommands, gantry::cli::AddDrainCommands,
        gantry::cli::AddHandoverCommand, gantry::cli::AddTopologyCommand,
        gantry::cli::AddScontrolCommands, gantry::cli::AddCacheCommands}) {
    add_command(commands);
  }

  if (std::optional<int> code =
          gantry::cli::PrecheckCommandLine(app, invoked, words)) {
    return *code;
  }
  word_pointers.clear();
  for (std::string& word : words) word_pointers.push_back(word.data());
  word_pointers.push_back(nullptr);
  argc = static_cast<int>(words.size());
  argv = word_pointers.data();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return commands.RunParsed(controller).value_or(1);
}

}  // namespace

int main(int argc, char** argv) {
  // One malloc arena: gRPC's threads each made one of their own (a heap
  // mapped and faulted in per thread) for a process that lives for one
  // request.
  mallopt(M_ARENA_MAX, 1);
  // Follows the leader quickly through a hand-over or a failover.
  gantry::PollReconnectsOften();
  const int status = RunCommandLine(argc, argv);
  // Everything the command had to say is written: leave without tearing
  // gRPC down (ControllerClient keeps its channel for the process). The
  // teardown joins gRPC's threads one by one, which cost more than the
  // request itself when the node was busy (a gang starting).
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(status);
}
