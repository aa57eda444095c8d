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

#include "cli/command_table.h"

namespace gantry::cli {

// Adds these subcommands and their options to the command table.
void AddScontrolCommands(CommandTable& commands);

}  // namespace gantry::cli
