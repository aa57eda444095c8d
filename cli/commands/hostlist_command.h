// `gantry hostlist` (scontrol show hostlist): compresses a list of host
// names or hostlist expressions into one expression, as Slurm writes it.
// Needs no controller. Returns the process exit code and prints errors as
// "gantry hostlist: error: ...".
#pragma once

#include <string>
#include <vector>

#include "cli/command_table.h"

namespace gantry::cli {

// `scontrol show hostlist [LIST]`: the hosts of LIST (names or expressions,
// separated by commas or spaces; several arguments are one list) compressed
// in the order given; no argument: $SLURM_JOB_NODELIST.
int RunHostlistCommand(const std::vector<std::string>& lists);

// Adds `gantry hostlist` (scontrol show hostlist) to the command table.
void AddHostlistCommand(CommandTable& commands);

}  // namespace gantry::cli
