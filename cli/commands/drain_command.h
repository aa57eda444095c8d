// `gantry drain` (scontrol update state=drain) and `gantry resume`, for
// admins: stop placing new work on nodes, or let drained nodes take work
// again. Returns the process exit code and prints errors as "gantry drain:
// error: ..." (or "gantry resume: ...").
#pragma once

#include <string>
#include <vector>

#include "cli/command_table.h"

namespace gantry::cli {

// `nodes`: names or hostlists. `reason` is shown in gantry nodes.
int RunDrainCommand(const std::string& controller,
                    const std::vector<std::string>& nodes,
                    const std::string& reason, bool resume);

// Adds `gantry drain` and `gantry resume` (scontrol update state=...) to the
// command table.
void AddDrainCommands(CommandTable& commands);

}  // namespace gantry::cli
