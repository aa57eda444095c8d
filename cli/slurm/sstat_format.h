// sstat's view of a running job: what the agents measured of its processes
// on each node (JobRecord.live_usage) summed into one line per job, with
// sstat's field names (JobID, AveCPU, AveRSS, MaxRSS, MaxRSSNode, MinCPU,
// MinCPUNode, NTasks, ...). Gantry measures a job's processes together
// (its cgroup on each node), so there are no per-step lines.
//
// Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/slurm/sacct_format.h"
#include "gantry/v1/types.pb.h"

namespace gantry::cli {

inline constexpr char kSstatDefaultFormat[] =
    "JobID,MaxRSS,MaxRSSNode,AveRSS,MinCPU,MinCPUNode,AveCPU,NTasks";

// The fields in order; INVALID_ARGUMENT names an unknown one (and lists
// the known).
absl::StatusOr<std::vector<std::string>> ParseSstatFields(
    std::string_view list);

// The header line (and underline for fixed width).
std::string SstatHeader(const std::vector<std::string>& fields,
                        SacctParsable parsable);
// The job's line; empty when nothing was measured of it yet.
std::string SstatRow(const v1::JobRecord& job,
                     const std::vector<std::string>& fields,
                     SacctParsable parsable);

// Slurm's memory figure: kB with a K suffix ("2048K").
std::string SstatKb(uint64_t bytes);

}  // namespace gantry::cli
