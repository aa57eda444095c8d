// What the command line goes through after the Slurm names are mapped and
// before CLI11 parses it: Slurm options Gantry does not act on are taken
// out with a warning, or refused by name (cli/slurm/foreign_options.h);
// --usage becomes --help; an unknown option gets getopt's words and the
// closest known one (cli/option_check.h).
//
// Not thread-safe (reads the CLI11 application).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace gantry::cli {

// `words`: the whole command line, words[0] the program; changed in place.
// `invoked`: the base name the binary was run as (squeue, gantry, ...).
// Returns the exit code when the command must stop here (after printing
// why), nullopt to go on.
std::optional<int> PrecheckCommandLine(const CLI::App& app,
                                       const std::string& invoked,
                                       std::vector<std::string>& words);

}  // namespace gantry::cli
