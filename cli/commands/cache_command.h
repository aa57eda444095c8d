// `gantry cache`: the datasets the nodes' caches hold (--dataset), a
// prefetch of one onto nodes, and an eviction:
//   gantry cache [list] [--nodes=HOSTLIST] [--user=NAME] [--dataset=NAME]
//   gantry cache prefetch NAME:PATH --nodes=HOSTLIST [--no-wait]
//   gantry cache evict NAME [--nodes=HOSTLIST] [--user=NAME] [--no-wait]
// Each returns the process exit code and prints errors as
// "gantry cache: error: ...".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/command_table.h"

namespace gantry::cli {

// Adds these subcommands and their options to the command table.
void AddCacheCommands(CommandTable& commands);

}  // namespace gantry::cli
