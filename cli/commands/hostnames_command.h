// `gantry hostnames` (scontrol show hostnames): expands hostlists. Returns
// the process exit code and prints errors as "gantry hostnames: error:
// ...".
#pragma once

#include <string>
#include <vector>

#include "cli/command_table.h"

namespace gantry::cli {

// `scontrol show hostnames [HOSTLIST]`: one name per line; no argument:
// $SLURM_JOB_NODELIST. Needs no controller.
int RunHostnamesCommand(const std::vector<std::string>& hostlists);

// Adds `gantry hostnames` (scontrol show hostnames) to the command table.
void AddHostnamesCommand(CommandTable& commands);

}  // namespace gantry::cli
