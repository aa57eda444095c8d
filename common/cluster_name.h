// The site's names as Slurm's tools show them. The cluster's:
// SLURM_CLUSTER_NAME in a job, sacct's and sreport's Cluster column,
// scontrol show config's ClusterName. A Gantry controller serves one
// cluster, named by gantryd's --cluster-name (Slurm's ClusterName); the CLI
// learns it from the controller (AccountingResponse, ClusterStatusResponse),
// so every one of them says the same. And a job's QOS when it names none.
// Pure; thread-safe.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace gantry {

// gantryd's --cluster-name when not given.
inline constexpr char kDefaultClusterName[] = "gantry";

// A job's QOS when it names none (Slurm's default QOS), for SLURM_JOB_QOS
// and what squeue, sacct and scontrol show.
inline constexpr char kDefaultQos[] = "normal";

// OK for a name Slurm's tools and accounting can carry (a cluster, an
// account): 1 to 64 characters, letters, digits, '_', '-' and '.';
// INVALID_ARGUMENT naming `what` and saying what is wrong otherwise.
absl::Status CheckSlurmName(const std::string& what, const std::string& name);

}  // namespace gantry
