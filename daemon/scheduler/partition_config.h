// Partitions as the admin defines them: gantryd's repeatable --partition
// flag (or `partition = [...]` in gantry.toml) takes one partition per value
// in slurm.conf's PartitionName syntax, so lines can be carried over:
//
//   gpu Nodes=node[001-064] Default=YES DefaultTime=1:00:00 MaxTime=2-00:00:00
//   PartitionName=debug Nodes=node[065-068] MaxTime=30:00 MaxNodes=2
//
// The first word is the name (bare, or as PartitionName=NAME); then keys:
//   Nodes=HOSTLIST|ALL   member nodes (default ALL: every node)
//   Default=YES|NO       where jobs without --partition go (default: the
//                        first partition listed)
//   DefaultTime=TIME     limit for jobs that give no --time (default MaxTime)
//   MaxTime=TIME|UNLIMITED  the longest --time accepted
//   MaxNodes=N|UNLIMITED    the most nodes one job may ask for
//   HotSpares=HOSTLIST   member nodes kept for restarts of failed jobs
//   State=UP             accepted for slurm.conf compatibility
// Times are Slurm's formats (common/option_values.h ParseTimeLimit). Key names
// are case-insensitive, as in slurm.conf.
//
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry {

struct PartitionConfig {
  std::string name;
  bool all_nodes = true;
  std::set<std::string> nodes;  // when !all_nodes
  bool is_default = false;
  uint64_t default_time_seconds = 0;  // 0: none (MaxTime applies)
  uint64_t max_time_seconds = 0;      // 0: unlimited
  uint32_t max_nodes = 0;             // 0: unlimited
  std::set<std::string> hot_spares;

  bool Contains(const std::string& node) const {
    return all_nodes || nodes.count(node) > 0;
  }
  // The limit a job that gives none gets: DefaultTime, else MaxTime.
  uint64_t ImplicitTimeLimit() const {
    return default_time_seconds ? default_time_seconds : max_time_seconds;
  }
};

// One definition. Errors (INVALID_ARGUMENT) name the key and what is wrong.
absl::StatusOr<PartitionConfig> ParsePartitionLine(const std::string& line);

// Every definition, checked together: names unique, at most one Default=YES
// (none: the first becomes the default), hot spares inside their partition,
// DefaultTime not above MaxTime. An empty list is an error. Errors say which
// definition (by position and name) is wrong.
absl::StatusOr<std::vector<PartitionConfig>> ParsePartitions(
    const std::vector<std::string>& lines);

}  // namespace gantry
