// Command-line parsing shared by the daemons: the keys of the TOML file given
// with --config are applied first, then the command line, so a flag always
// wins over the file. The app must have a --config option and every flag's
// long name is a valid file key. Not thread-safe (parses into the app's
// bound variables).
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace gantry {

// Parses argv into `app`. Returns nullopt to carry on, or the exit code to
// end the program with (after --help, or an error printed as
// "<program>: ..." for the file, or by CLI11 for the flags).
std::optional<int> ParseDaemonFlags(CLI::App& app, int argc, char** argv,
                                    const std::string& program);

}  // namespace gantry
