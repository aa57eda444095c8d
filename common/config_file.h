// The cluster's configuration file (/etc/gantry/gantry.toml when installed):
// TOML with one table per program, `[controller]` for gantryd and `[agent]`
// for gantry-agent, whose keys are that program's long flag names
// (`state-dir = "/var/lib/gantry"` under [controller] means gantryd
// --state-dir). One file serves every node: each program reads its own
// table and skips the other's. A key outside any table, or a table of
// another name, is an error, so a typo never passes silently.
//
// The table becomes flag words placed before the real command line, so a
// flag on the command line always wins over the file (common/daemon_flags).
//
// Pure apart from reading the file; thread-safe.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry {

// The tables a config file may hold.
const std::set<std::string>& ConfigTables();

// One flag word from the file, with where it came from, so a bad value
// (type, range) found later by the flag parser can name its line.
struct ConfigFlag {
  std::string key;
  int line = 0;
  // {"--key=value"}, or {"--key", ""} for an empty string, which the flag
  // parser would otherwise read as a flag missing its value.
  std::vector<std::string> words;

  bool operator==(const ConfigFlag&) const = default;
};

// Reads `path` and returns a ConfigFlag for every key of `table` (none if
// the file has no such table). `known_keys` are the keys the table may
// hold. Values may be strings, integers, floats or booleans, or a list of
// them (the flag is given once per element, for repeatable flags).
// Errors: NOT_FOUND (missing file); INVALID_ARGUMENT, with path and line,
// for a TOML syntax error, a key outside any table, a table not in
// ConfigTables(), a key of `table` not in `known_keys`, or a value that is
// a table or a nested list.
absl::StatusOr<std::vector<ConfigFlag>> ConfigFileToFlags(
    const std::string& path, const std::string& table,
    const std::set<std::string>& known_keys);

}  // namespace gantry
