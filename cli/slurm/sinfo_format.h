// sinfo's views of the node list: the state word of a node as sinfo prints
// it, and the -o/-O layouts (the default partition summary among them)
// rendered over partitions and nodes, grouped and sorted as sinfo does.
//
// Pure; thread-safe.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/slurm/percent_format.h"
#include "cli/slurm/sinfo_fields.h"
#include "gantry/v1/types.pb.h"

namespace gantry::cli {

// sinfo's layouts (sinfo(1)): the default, -s, -l, -N, -N -l, -R, -R -l.
inline constexpr char kSinfoDefaultFormat[] = "%#P %.5a %.10l %.6D %.6t %N";
inline constexpr char kSinfoSummarizeFormat[] = "%#P %.5a %.10l %.16F  %N";
inline constexpr char kSinfoLongFormat[] =
    "%#P %.5a %.10l %.10s %.4r %.8h %.10g %.6D %.11T %N";
// (-N right-aligns the partition: "%.#P", as sinfo's own "%.9P" with the
// width computed.)
inline constexpr char kSinfoNodeFormat[] = "%#N %.6D %.#P %6t";
inline constexpr char kSinfoNodeLongFormat[] =
    "%#N %.6D %.#P %.11T %.4c %.8z %.6m %.8d %.6w %.8f %20E";
inline constexpr char kSinfoReasonsFormat[] = "%20E %9u %19H %N";
inline constexpr char kSinfoReasonsLongFormat[] = "%20E %12U %19H %6t %N";

// The letters sinfo -o knows here.
inline constexpr char kSinfoLetters[] =
    "PRalLDtTNnocCGmefEOAFsrhgzXYZdwuUHbBpIMSvV";

struct SinfoFilter {
  std::set<std::string> partitions;  // empty: all
  // State words as SinfoNodeState gives them, without "*"; empty: all.
  std::set<std::string> states;
  std::set<std::string> nodes;  // -n: host names; empty: all
  // -R: only nodes with a reason to list (down, drained, draining).
  bool with_reason = false;
  bool responding_only = false;  // -r: nodes that respond
  bool dead_only = false;        // -d: nodes that do not ("*")
  bool Matches(const v1::NodeRecord& node, const std::string& partition) const;
};

// sinfo's -o/--format ("%P %.5a %.10l %.6D %.6t %N" and the like,
// cli/slurm/percent_format.h, with "%#P"/"%#N" as wide as the longest
// value, at least 9) or -O/--Format field names. Letters:
//   %P partition (default marked *)   %R partition name   %a availability
//   %l time limit  %L default time  %D node count  %t/%T state  %N node
//   list  %n host names  %o addresses  %c CPUs per node  %C CPUs A/I/O/T
//   %A nodes A/I  %F nodes A/I/O/T  %G GPUs (gres)  %m memory MB  %e free
//   memory MB  %f %b features  %E reason  %u %U who set it  %H when  %O
//   CPU load (N/A)  %s job size  %r root only  %h oversubscribe  %g
//   groups  %z S:C:T  %X %Y %Z sockets, cores, threads  %d tmp disk  %w
//   weight  %B max CPUs per node  %p %I priority tier and factor  %M
//   preempt mode  %S alloc nodes  %v agent version  %V cluster
// Nodes of a partition whose other fields print the same share a row (%D
// counts them, %N/%n/%o list them, %C %A %F %e sum them), as sinfo groups
// them; with -N every node has its own row.
class SinfoFormat {
 public:
  // `unknown` collects letters left out (null: INVALID_ARGUMENT instead).
  static absl::StatusOr<SinfoFormat> Parse(
      std::string_view format, std::vector<char>* unknown = nullptr);
  // -O: INVALID_ARGUMENT names an unknown field and the closest known one.
  static absl::StatusOr<SinfoFormat> ParseFields(std::string_view fields);

  std::string Header() const;
  // The rows, without the header, for the nodes and partitions the filter
  // selects, partitions in the configured order ("#" fields unfitted).
  std::vector<std::string> Rows(
      const std::vector<v1::NodeRecord>& nodes,
      const std::vector<v1::PartitionInfo>& partitions,
      const SinfoFilter& filter, bool per_node) const;
  // What sinfo prints: the header (unless `no_header`) and the rows, "#"
  // fields fitted; rows sorted as sinfo's default ("#P,-t": partitions as
  // configured, busier states first; with -N by node name). A partition
  // with no node gets one "n/a" row unless states or nodes are filtered.
  std::string Table(const std::vector<v1::NodeRecord>& nodes,
                    const std::vector<v1::PartitionInfo>& partitions,
                    const SinfoFilter& filter, bool per_node,
                    bool no_header) const;

 private:
  std::vector<std::vector<std::string>> Values(
      const std::vector<v1::NodeRecord>& nodes,
      const std::vector<v1::PartitionInfo>& partitions,
      const SinfoFilter& filter, bool per_node, bool sorted) const;

  PercentFormat format_;
};

}  // namespace gantry::cli
