// `gantry status`: the admin's one-screen view of the cluster (see
// cli/views/status_screen.h for what it shows). Returns the process exit code
// and prints errors as "gantry status: error: ...".
#pragma once

#include <string>

#include "cli/command_table.h"

namespace gantry::cli {

struct StatusOptions {
  bool json = false;
  std::string color = "auto";  // auto, always or never
};

int RunStatusCommand(const std::string& controller,
                     const StatusOptions& options);

// Adds `gantry status` and its options to the command table.
void AddStatusCommand(CommandTable& commands);

}  // namespace gantry::cli
