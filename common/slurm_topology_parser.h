// Reads a Slurm topology.conf in the tree format into a Topology:
//
//   # comment
//   SwitchName=spine Switches=leaf[1-2] LinkSpeed=100
//   SwitchName=leaf1 Nodes=node[01-16]
//   SwitchName=leaf2 Nodes=node[17-32] LinkSpeed=100
//
// As Slurm reads it: keywords are case-insensitive, values may be quoted,
// '#' starts a comment, a line ending in '\' continues on the next one,
// Switches= and Nodes= take hostlist expressions, LinkSpeed is an unsigned
// integer (default 1), and a switch has either child switches or nodes,
// never both and never neither. The block format (BlockName=, BlockSizes=)
// and topology.yaml are recognised and refused as not supported yet.
//
// Pure functions (apart from reading the file), thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/topology.h"

namespace gantry {

// Parses topology.conf text. `source` names the file in error messages.
// Errors, each "<source>:<line>: <reason>":
//   INVALID_ARGUMENT: a line that is not Key=Value words, an unknown or
//     repeated keyword, a line not starting with SwitchName=, an empty or
//     over-long (> 64 characters) switch name, a bad hostlist (or one of
//     more than 65,536 names, Slurm's limit) or LinkSpeed,
//     a switch with both or neither of Switches= and Nodes=, an unterminated
//     quote or a continuation at the end of the file, and everything
//     Topology::Build refuses (a node named twice, a switch defined twice,
//     an unknown child switch, a loop).
//   UNIMPLEMENTED: the block topology format, or topology.yaml content.
absl::StatusOr<Topology> ParseSlurmTopology(std::string_view text,
                                            const std::string& source);

// Reads and parses a topology.conf file.
// Errors: NOT_FOUND for a missing file, INVALID_ARGUMENT when it cannot be
// read, UNIMPLEMENTED for a .yaml/.yml file, and those of ParseSlurmTopology.
absl::StatusOr<Topology> LoadSlurmTopologyFile(const std::string& path);

}  // namespace gantry
