// Daemon configuration files: TOML whose keys are the daemon's long flag
// names (`state-dir = "/var/lib/gantry"` means `--state-dir`). The file is
// turned into flag words placed before the real command line, so a flag on
// the command line always wins over the file.
//
// Pure apart from reading the file; thread-safe.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry {

// Reads `path` and returns "--key=value" words for every key.
// `known_keys` are the accepted keys; any other key is an error naming the
// key and its line. Values may be strings, integers, floats or booleans,
// or a list of them (the flag is given once per element).
// Errors: NOT_FOUND (missing file), INVALID_ARGUMENT (TOML syntax error with
// line and column, unknown key, table or array value).
absl::StatusOr<std::vector<std::string>> ConfigFileToFlags(
    const std::string& path, const std::set<std::string>& known_keys);

}  // namespace gantry
