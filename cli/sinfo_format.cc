#include "cli/sinfo_format.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/hostlist.h"
#include "common/job_options.h"

namespace gantry::cli {
namespace {

std::string BaseState(const std::string& state) {
  return !state.empty() && state.back() == '*'
             ? state.substr(0, state.size() - 1)
             : state;
}

}  // namespace

std::string SinfoNodeState(const v1::NodeRecord& node) {
  if (node.state() == v1::NODE_DOWN) return "down";
  const bool busy = node.cpus_allocated() > 0 || node.gpus_allocated() > 0 ||
                    node.mem_allocated_mb() > 0;
  std::string state;
  // Slurm's health checks drain a node: a degraded node looks the same.
  if (node.drained() || node.health_problems_size() > 0) {
    state = busy ? "drng" : "drain";
  } else if (node.inventory().cpus() > 0 &&
             node.cpus_allocated() >= node.inventory().cpus()) {
    state = "alloc";
  } else if (busy) {
    state = "mix";
  } else if (node.hot_spare()) {
    state = "resv";
  } else {
    state = "idle";
  }
  if (node.state() == v1::NODE_UNREACHABLE) state += "*";
  return state;
}

bool SinfoFilter::Matches(const v1::NodeRecord& node,
                          const std::string& partition) const {
  if (!partitions.empty() && !partitions.count(partition)) return false;
  return states.empty() || states.count(BaseState(SinfoNodeState(node)));
}

std::vector<std::vector<std::string>> SinfoSummary(
    const std::vector<v1::NodeRecord>& nodes,
    const std::vector<v1::PartitionInfo>& partitions,
    const SinfoFilter& filter) {
  std::vector<std::vector<std::string>> rows = {
      {"PARTITION", "AVAIL", "TIMELIMIT", "NODES", "STATE", "NODELIST"}};
  for (const v1::PartitionInfo& partition : partitions) {
    if (!filter.partitions.empty() &&
        !filter.partitions.count(partition.name())) {
      continue;
    }
    std::vector<std::pair<std::string, std::vector<std::string>>> by_state;
    for (const v1::NodeRecord& node : nodes) {
      if (std::find(node.partitions().begin(), node.partitions().end(),
                    partition.name()) == node.partitions().end() ||
          !filter.Matches(node, partition.name())) {
        continue;
      }
      const std::string state = SinfoNodeState(node);
      auto it =
          std::find_if(by_state.begin(), by_state.end(),
                       [&](const auto& entry) { return entry.first == state; });
      if (it == by_state.end()) {
        by_state.push_back({state, {}});
        it = by_state.end() - 1;
      }
      it->second.push_back(node.name());
    }
    const std::string shown =
        partition.is_default() ? partition.name() + "*" : partition.name();
    const std::string time_limit =
        partition.max_time_seconds() > 0
            ? FormatTimeLimit(partition.max_time_seconds())
            : "infinite";
    if (by_state.empty() && filter.states.empty()) {
      rows.push_back({shown, "up", time_limit, "0", "n/a", ""});
    }
    for (const auto& [state, names] : by_state) {
      rows.push_back({shown, "up", time_limit, absl::StrCat(names.size()),
                      state, CompressHostlist(names)});
    }
  }
  return rows;
}

}  // namespace gantry::cli
