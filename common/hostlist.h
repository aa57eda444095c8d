// Slurm-style hostlist expressions: "node[01-04,07],gpu-a[1-2]" <-> names.
//
// Pure functions, thread-safe. Zero padding is kept: "node[01-10]" expands to
// node01..node10, and compressing node01..node10 gives back "node[01-10]".
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry {

// Expands a hostlist expression into host names, in the order written.
// Accepts comma-separated items, each a name optionally holding one or more
// bracketed range lists ("rack[1-2]-node[01-03]" gives the cross product).
// Errors (INVALID_ARGUMENT, naming the problem): unbalanced brackets, empty
// items, a range whose end is below its start, non-numeric bounds, or an
// expansion larger than `max_hosts`.
absl::StatusOr<std::vector<std::string>> ExpandHostlist(
    std::string_view expression, std::size_t max_hosts = 1'000'000);

// Compresses host names into the shortest usual hostlist expression: names
// that differ only in a trailing number with the same prefix (and the same
// zero-padding width) are merged into ranges. The order of first appearance
// of each prefix is kept; numbers within a prefix are sorted and deduplicated.
std::string CompressHostlist(const std::vector<std::string>& hosts);

}  // namespace gantry
