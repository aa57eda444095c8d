// sinfo's views of the node list: the partition summary (one line per
// partition and node state, nodes as a hostlist) and the state word of a
// node as sinfo prints it.
//
// Pure; thread-safe.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/slurm/percent_format.h"
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

// sinfo's -o/--format: "%P %.5a %.10l %.6D %.6t %N" and the like
// (cli/slurm/percent_format.h). Letters:
//   %P partition (default marked *)   %R partition name   %a availability
//   %l time limit  %D node count  %t state  %T state (long)  %N node list
//   %n host names  %o addresses   %c CPUs per node  %C CPUs A/I/O/T
//   %G GPUs (gres)  %m memory MB  %e free memory MB  %f features
//   %E reason  %O CPU load (not reported: N/A)
// Without -N, nodes of a partition whose other fields print the same share
// a row (%D counts them, %N/%n/%o list them, %C and %e sum them), as sinfo
// groups them; with -N every node has its own row.
class SinfoFormat {
 public:
  static absl::StatusOr<SinfoFormat> Parse(std::string_view format);

  std::string Header() const;
  // The rows, without the header, for the nodes and partitions the filter
  // selects, partitions in the configured order.
  std::vector<std::string> Rows(
      const std::vector<v1::NodeRecord>& nodes,
      const std::vector<v1::PartitionInfo>& partitions,
      const SinfoFilter& filter, bool per_node) const;

 private:
  PercentFormat format_;
};

}  // namespace gantry::cli
