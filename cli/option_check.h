// Checks a subcommand's options before CLI11 parses them, so that a typo
// gets getopt's words, as the Slurm tools print them, and the closest
// option: "squeue: unrecognized option '--nme' (did you mean '--name'?)"
// then 'Try "squeue --help" for more information'.
//
// Not thread-safe (reads the CLI11 application it is given).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "absl/status/status.h"

namespace gantry::cli {

// `args`: the words after the subcommand's name. `program`: how the user
// called it ("squeue", or "gantry queue"). INVALID_ARGUMENT with the whole
// message (lines without a trailing newline) for the first option that
// neither the subcommand nor its parent knows.
absl::Status CheckOptions(const CLI::App& subcommand,
                          const std::vector<std::string>& args,
                          const std::string& program);

}  // namespace gantry::cli
