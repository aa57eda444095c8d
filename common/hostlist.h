// Slurm-style hostlist expressions: "node[01-04,07],gpu-a[1-2]" <-> names.
//
// Pure functions, thread-safe. The syntax and the results are Slurm's
// (checked against `scontrol show hostnames` / `scontrol show hostlist` by
// tests/integration/test_hostlist_differential.py):
//   - items are separated by commas, spaces or tabs; empty items are skipped;
//   - an item is a name, or a name holding bracket groups ("node[1-3]",
//     "[1,3-5]" with no prefix, "rack[1-2]-n[01-04]"); the last group must
//     end the item;
//   - a range "lo-hi" pads to the width of `lo` as written ("[01-10]" gives
//     node01..node10, "[8-12]" does not pad); "lo-" means lo alone;
//   - with several groups, the last varies fastest, then the first, the
//     second, ..., the one before last slowest (Slurm's order:
//     "a[1-2]b[3-4]c[5-6]" gives a1b3c5 a1b3c6 a2b3c5 a2b3c6 a1b4c5 ...);
//   - a range of more than 65536 hosts is an error, as in Slurm.
// Stricter than Slurm where Slurm silently accepts garbage: unbalanced or
// nested brackets, a ']' outside a group, whitespace or signs inside a
// group, numbers of more than 18 digits, and control characters are errors.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry {

// Expands a hostlist expression into host names, in Slurm's order
// (duplicates kept). Errors (INVALID_ARGUMENT, naming the problem): the
// syntax errors above, or an expansion larger than `max_hosts`
// (RESOURCE_EXHAUSTED only when memory runs out first).
absl::StatusOr<std::vector<std::string>> ExpandHostlist(
    std::string_view expression, std::size_t max_hosts = 1'000'000);

// `scontrol show hostlist EXPRESSION`: the expression's hosts compressed in
// the order given, without sorting or removing duplicates ("a3,a1,a2" gives
// "a[3,1-2]", "a1,b1,a2" stays as it is). Same errors as ExpandHostlist.
absl::StatusOr<std::string> CompressHostlistExpression(
    std::string_view expression, std::size_t max_hosts = 1'000'000);

// The same compression for a list of names (each one host name, not an
// expression), in the order given.
std::string CompressHostlistInOrder(const std::vector<std::string>& hosts);

// Compresses a set of host names into the usual expression, as Slurm writes
// a job's or a partition's node list: names sharing a prefix are merged
// into ranges in numeric order without duplicates; prefixes keep the order
// of their first appearance. Zero padding follows Slurm's rule (the width
// of a range is that of its low bound; "9","10" merge, "009","10" do not).
std::string CompressHostlist(const std::vector<std::string>& hosts);

}  // namespace gantry
