// sinfo's fields one node and partition at a time: the state words, the
// header and value of each -o letter, and the -O names for the letters.
// Grouping rows and the layouts are cli/slurm/sinfo_format.h.
//
// Pure (apart from user names from the password database); thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gantry/v1/types.pb.h"

namespace gantry::cli {

// sinfo's word for the node's state: "idle", "mix" (partly allocated),
// "alloc" (every CPU allocated), "drain" (drained, or degraded by a health
// problem, with nothing running), "drng" (draining: drained with work still
// on it), "resv" (hot spare), "down", "unk" (never heard from); "*"
// appended when the node does not respond (unreachable, or down: Gantry
// marks a node down when its agent is gone), as sinfo marks such nodes.
std::string SinfoNodeState(const v1::NodeRecord& node);

// sinfo's long form (%T): "mixed", "allocated", "drained", ... with the
// same "*".
std::string SinfoLongState(const std::string& state);

// The state word without its "*".
std::string SinfoBaseState(const std::string& state);

// The column header of a letter ("" for one sinfo has no field for).
const char* SinfoHeader(char letter);

// The -O name's letter, case-insensitive (0: unknown), and every name.
char SinfoFieldLetter(std::string_view name);
std::vector<std::string> SinfoFieldNames();

// One node's value of a letter that groups rows (not the counts and lists
// that sum over a row's nodes).
std::string SinfoNodeValue(char letter, const v1::NodeRecord& node,
                           const v1::PartitionInfo& partition);

}  // namespace gantry::cli
