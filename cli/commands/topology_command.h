// `gantry topology`: the switch tree the controller places jobs by, shown,
// or imported from a file by an admin. Returns the process exit code and
// prints errors as "gantry topology: error: ...".
#pragma once

#include <string>

#include "cli/command_table.h"

namespace gantry::cli {

// `gantry topology [--json]`, and `gantry topology import FILE`.
int RunTopologyCommand(const std::string& controller, const std::string& file,
                       const std::string& format, bool json);

// Adds `gantry topology` and `gantry topology import` to the command table.
void AddTopologyCommand(CommandTable& commands);

}  // namespace gantry::cli
