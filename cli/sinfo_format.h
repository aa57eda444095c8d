// sinfo's views of the node list: the partition summary (one line per
// partition and node state, nodes as a hostlist) and the state word of a
// node as sinfo prints it.
//
// Pure; thread-safe.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "gantry/v1/types.pb.h"

namespace gantry::cli {

// sinfo's word for the node's state: "idle", "mix" (partly allocated),
// "alloc" (every CPU allocated), "drain" (drained, or degraded by a health
// problem, with nothing running), "drng" (draining: drained with work still
// on it), "resv" (hot spare), "down"; "*" appended when the controller
// cannot reach it (as sinfo marks a node that does not respond).
std::string SinfoNodeState(const v1::NodeRecord& node);

struct SinfoFilter {
  std::set<std::string> partitions;  // empty: all
  // State words as SinfoNodeState gives them, without "*"; empty: all.
  std::set<std::string> states;
  bool Matches(const v1::NodeRecord& node, const std::string& partition) const;
};

// The rows of `sinfo`: a header (PARTITION AVAIL TIMELIMIT NODES STATE
// NODELIST) and one row per partition and node state, partitions in the
// configured order (a partition with no node gets one "n/a" row), states in
// order of first appearance. The default partition is marked with "*" and
// TIMELIMIT is the partition's MaxTime, as sinfo prints them.
std::vector<std::vector<std::string>> SinfoSummary(
    const std::vector<v1::NodeRecord>& nodes,
    const std::vector<v1::PartitionInfo>& partitions,
    const SinfoFilter& filter);

}  // namespace gantry::cli
