// ControllerOptions: what gantryd (or a test) sets a Controller up with.
// Kept apart from controller.h so the settings, each documented where it
// is declared, read on their own, and the Controller's declaration stays
// about the controller itself.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "common/cluster_name.h"
#include "daemon/controller/core/controller_feature.h"
#include "daemon/scheduler/fabric_parts.h"
#include "daemon/scheduler/partition_config.h"
#include "daemon/scheduler/priority.h"

namespace gantry {

class ControllerMetrics;

struct ControllerOptions {
  std::string state_dir;
  // The partitions (daemon/scheduler/partition_config.h); empty: one partition
  // "main" holding every node. Exactly one is_default when given.
  std::vector<PartitionConfig> partitions;
  int64_t heartbeat_interval_ms = 1000;
  // A node not heard from for this long is DOWN and its jobs NODE_FAIL.
  int64_t node_timeout_ms = 3000;
  // After a controller start, how long agents have to reconnect and report
  // their ranks before their nodes are DOWN.
  int64_t reconnect_grace_ms = 30000;
  uint32_t kill_grace_seconds = 10;
  // Restarts a job gets when it does not say (--max-restarts).
  uint32_t default_max_restarts = 3;
  // First backoff before restarting after an application failure; doubles
  // with each restart (see restart_policy.h).
  int64_t restart_backoff_ms = 1000;
  // Nodes kept free for the restarts of failed jobs (--hot-spares and the
  // partitions' HotSpares together).
  std::set<std::string> hot_spares;
  // What nodes missing from the imported switch tree take
  // (daemon/scheduler/fabric_parts.h).
  UnlistedNodes unlisted_nodes = UnlistedNodes::kLast;
  // Priority factors and fair-share decay (daemon/scheduler/priority.h).
  PriorityWeights priority_weights;
  // Where the controller reports its metrics; null: nowhere (unit tests).
  // Must outlive the controller.
  ControllerMetrics* metrics = nullptr;
  // Whether this controller may act now (any thread may call it); unset:
  // always. A replicated leader (gantryd --etcd) answers whether its etcd
  // lease is surely held: one woken from a pause past its lease runs no
  // scheduling pass, and so starts nothing, before it steps down.
  std::function<bool()> may_act;
  // A finished job stays in the live state (listings, dependencies) this
  // long after it ended, then moves to the history (Slurm's MinJobAge), so
  // memory and load time do not grow with the jobs ever run.
  int64_t min_job_age_ms = 300'000;
  // History records are deleted this long after their job ended; 0: kept
  // for ever.
  int64_t history_retention_ms = 30LL * 24 * 3600 * 1000;
  // An interactive allocation (srun or salloc outside a job) whose client
  // is not heard from (KeepAllocation) for this long ends: Slurm's
  // InactiveLimit. 0: never. After a controller start its clients get the
  // longer of this and reconnect_grace_ms.
  int64_t inactive_limit_ms = 60'000;
  // The cluster's name (common/cluster_name.h): SLURM_CLUSTER_NAME, and
  // what sacct, sreport and scontrol show config print.
  std::string cluster_name = kDefaultClusterName;
  // The account of jobs that name none (-A); empty: none.
  std::string default_account;
  // Features run beside the core, in this order (controller_feature.h;
  // gantryd registers daemon/controller/features/standard_features.h).
  std::vector<FeatureFactory> features;
};

}  // namespace gantry
