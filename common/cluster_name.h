// The cluster's name as Slurm's tools show it: SLURM_CLUSTER_NAME in a
// job, sacct's and sreport's Cluster column, scontrol show config's
// ClusterName. A Gantry controller serves one cluster, and its name is not
// configurable yet, so every one of them says the same.
#pragma once

namespace gantry {

inline constexpr char kClusterName[] = "gantry";

}  // namespace gantry
