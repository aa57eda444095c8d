// Command-line parsing shared by the daemons: the keys of the program's
// table in the TOML file given with --config (common/config_file.h) are
// applied first, then the command line, so a flag always wins over the
// file. The app must have a --config option, and every flag's long name is
// a valid key of the table. The file is read only when --config names it:
// a daemon started by hand or by a test never picks up an installed
// /etc/gantry/gantry.toml by surprise; the systemd units pass it.
//
// Adds --check-config: parse the command line and the file (keys, types,
// ranges), print what is wrong or "configuration OK", and exit.
//
// Not thread-safe (parses into the app's bound variables).
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace gantry {

// Parses argv into `app`, reading `table` ("controller", "agent") of the
// --config file. Returns nullopt to carry on, or the exit code to end the
// program with: 0 after --help or a good --check-config; 2 after an error,
// printed as "<program>: PATH:LINE: ..." for the file (a bad value names
// its key and line too), or by CLI11 for the command line.
std::optional<int> ParseDaemonFlags(CLI::App& app, int argc, char** argv,
                                    const std::string& program,
                                    const std::string& table);

}  // namespace gantry
