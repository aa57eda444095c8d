// scontrol's command line as gantry subcommands: `scontrol show job 7`
// becomes `gantry job --slurm-only 7`, `scontrol update JobId=7
// TimeLimit=10` `gantry update JobId=7 TimeLimit=10`, and so on (the table
// in ExpandScontrol). scontrol's global options (-d, -dd, -o, -Q, -v, -M)
// may stand anywhere, as scontrol takes them.
//
// Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry::cli {

// `argv` as given to main, argv[0] being scontrol. `notes` gets lines to
// print on stderr (options Gantry accepts without acting on them).
// INVALID_ARGUMENT for a command line that names no command or misses an
// argument; UNIMPLEMENTED for a command Gantry does not have, listing those
// it does.
absl::StatusOr<std::vector<std::string>> ExpandScontrol(
    const std::vector<std::string>& argv, std::vector<std::string>& notes);

// True when the command line asks for scontrol's help (-h, --help, help,
// or no command at all after the global options).
bool WantsScontrolHelp(const std::vector<std::string>& argv);

// What `scontrol --help` prints: the commands Gantry answers.
const char* ScontrolUsage();

}  // namespace gantry::cli
