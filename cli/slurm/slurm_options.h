// Command-line options in Slurm's grammar for the accounting commands
// (sacct, sreport, sprio, sshare, sdiag, sstat): -x VALUE, -xVALUE,
// --long VALUE, --long=VALUE, flags, and bundled short flags (-nP). An
// unknown option is an error naming the program and the closest known one.
//
// Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry::cli {

struct SlurmOption {
  const char* long_name;  // without "--"
  char short_name;        // 0: none
  bool takes_value;
};

struct ParsedOptions {
  // (long name, value) in command-line order; flags have an empty value.
  std::vector<std::pair<std::string, std::string>> options;
  std::vector<std::string> positional;

  bool Has(std::string_view long_name) const;
  // Every value given to the option, in order.
  std::vector<std::string> Values(std::string_view long_name) const;
  // The last value given (empty when none).
  std::string Last(std::string_view long_name) const;
};

// INVALID_ARGUMENT "PROGRAM: unknown option --nmae (did you mean --name?)",
// or "PROGRAM: option --format needs a value".
absl::StatusOr<ParsedOptions> ParseSlurmOptions(
    std::string_view program, const std::vector<SlurmOption>& table,
    const std::vector<std::string>& args);

}  // namespace gantry::cli
