// The options of squeue, sinfo and scancel that Slurm has and Gantry does
// not act on. Each is taken out of the command line before it is parsed,
// with a one-line warning when leaving it out changes nothing that matters
// (one cluster, no federation, no hidden partitions) or an error naming it
// when it would (reservations, licenses): never "unknown option" for a
// real Slurm option.
//
// Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry::cli {

// `command`: the gantry subcommand ("queue", "nodes", "cancel"); `args`:
// the words after it. Returns them without the options Gantry ignores
// (and their values); `warnings` gets a line for each. UNIMPLEMENTED,
// naming the option and why, for one whose absence would change the answer.
absl::StatusOr<std::vector<std::string>> TakeForeignOptions(
    std::string_view command, const std::vector<std::string>& args,
    std::vector<std::string>& warnings);

}  // namespace gantry::cli
