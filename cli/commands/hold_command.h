// `gantry hold` and `gantry release` (scontrol hold / release). Returns
// the process exit code and prints errors as "gantry hold: error: ..." (or
// "gantry release: ...").
#pragma once

#include <string>
#include <vector>

#include "cli/command_table.h"

namespace gantry::cli {

// `gantry hold` / `gantry release` (scontrol hold / release): held jobs
// stay pending until released. Ids as for cancel.
int RunHoldCommand(const std::string& controller,
                   const std::vector<std::string>& job_ids, bool release);

// Adds `gantry hold` and `gantry release` (scontrol hold / release) to the
// command table.
void AddHoldCommands(CommandTable& commands);

}  // namespace gantry::cli
