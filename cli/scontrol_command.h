// The scontrol verbs beyond show job / show node / hold / release, as
// gantry subcommands (scontrol's words map to them in
// cli/slurm/slurm_alias.cc):
//   gantry requeue [--hold] ID...     scontrol requeue / requeuehold
//   gantry update KEY=VALUE...        scontrol update JobId=.. / NodeName=..
//   gantry ping                       scontrol ping
//   gantry partitions [NAME]          scontrol show partition
//   gantry config                     scontrol show config
//   gantry version [--slurm]          scontrol version
// Each returns the process exit code and prints errors as
// "gantry COMMAND: error: ...".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace gantry::cli {

// What the subcommands parse into; must outlive the parse.
struct ScontrolCommands {
  CLI::App* requeue = nullptr;
  CLI::App* update = nullptr;
  CLI::App* ping = nullptr;
  CLI::App* partitions = nullptr;
  CLI::App* config = nullptr;
  CLI::App* version = nullptr;
  std::vector<std::string> words;  // job ids or assignments
  std::string partition;
  bool hold = false;
  bool one_line = false;
  bool slurm = false;
};

void AddScontrolCommands(CLI::App& app, ScontrolCommands& commands);

// The exit code of the subcommand that was parsed; nullopt when none of
// these was.
std::optional<int> RunScontrolCommands(const std::string& controller,
                                       const ScontrolCommands& commands);

}  // namespace gantry::cli
