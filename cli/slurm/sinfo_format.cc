#include "cli/slurm/sinfo_format.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/hostlist.h"
#include "common/option_values.h"

namespace gantry::cli {
namespace {

std::string BaseState(const std::string& state) {
  return !state.empty() && state.back() == '*'
             ? state.substr(0, state.size() - 1)
             : state;
}

constexpr char kLetters[] = "PRalDtTNnocCGmefEO";

const char* HeaderOf(char letter) {
  switch (letter) {
    case 'P':
    case 'R':
      return "PARTITION";
    case 'a':
      return "AVAIL";
    case 'l':
      return "TIMELIMIT";
    case 'D':
      return "NODES";
    case 't':
    case 'T':
      return "STATE";
    case 'N':
      return "NODELIST";
    case 'n':
      return "HOSTNAMES";
    case 'o':
      return "NODE_ADDR";
    case 'c':
      return "CPUS";
    case 'C':
      return "CPUS(A/I/O/T)";
    case 'G':
      return "GRES";
    case 'm':
      return "MEMORY";
    case 'e':
      return "FREE_MEM";
    case 'f':
      return "AVAIL_FEATURES";
    case 'E':
      return "REASON";
    case 'O':
      return "CPU_LOAD";
  }
  return "";
}

// sinfo's long state names (%T) for the short ones (%t).
std::string LongState(const std::string& state) {
  const std::string base = BaseState(state);
  const std::string suffix = base.size() < state.size() ? "*" : "";
  if (base == "mix") return "mixed" + suffix;
  if (base == "alloc") return "allocated" + suffix;
  if (base == "drain") return "drained" + suffix;
  if (base == "drng") return "draining" + suffix;
  if (base == "resv") return "reserved" + suffix;
  return state;
}

std::string NodeReason(const v1::NodeRecord& node) {
  if (node.health_problems_size() > 0) {
    return absl::StrJoin(node.health_problems(), "; ");
  }
  const std::string& reason =
      node.drained() ? node.drain_reason() : node.reason();
  return reason.empty() ? "none" : reason;
}

// Whether a field is summed or listed over a row's nodes instead of being
// part of what groups them.
bool IsAggregate(char letter) {
  return letter == 'D' || letter == 'N' || letter == 'n' || letter == 'o' ||
         letter == 'C' || letter == 'e';
}

// One node's value of a grouping field.
std::string NodeValue(char letter, const v1::NodeRecord& node,
                      const v1::PartitionInfo& partition) {
  switch (letter) {
    case 'P':
      return partition.is_default() ? partition.name() + "*" : partition.name();
    case 'R':
      return partition.name();
    case 'a':
      return "up";
    case 'l':
      return partition.max_time_seconds() > 0
                 ? FormatTimeLimit(partition.max_time_seconds())
                 : "infinite";
    case 't':
      return SinfoNodeState(node);
    case 'T':
      return LongState(SinfoNodeState(node));
    case 'c':
      return absl::StrCat(node.inventory().cpus());
    case 'G':
      return node.inventory().gpus_size() > 0
                 ? absl::StrCat("gpu:", node.inventory().gpus_size())
                 : "(null)";
    case 'm':
      return absl::StrCat(node.inventory().memory_mb());
    case 'f':
      return node.features().empty() ? "(null)"
                                     : absl::StrJoin(node.features(), ",");
    case 'E':
      return NodeReason(node);
    case 'O':
      return "N/A";
  }
  return "";
}

// A row: its grouping values and its nodes.
struct SinfoRow {
  std::vector<std::string> key;
  std::vector<const v1::NodeRecord*> nodes;
};

std::string AggregateValue(char letter, const SinfoRow& row) {
  std::vector<std::string> names;
  uint64_t allocated = 0, idle = 0, other = 0, free_mb = 0;
  for (const v1::NodeRecord* node : row.nodes) {
    names.push_back(letter == 'o' ? node->address() : node->name());
    const uint32_t total = node->inventory().cpus();
    const uint32_t used = std::min(node->cpus_allocated(), total);
    const bool usable = node->state() == v1::NODE_UP && !node->drained() &&
                        node->health_problems_size() == 0;
    allocated += used;
    (usable ? idle : other) += total - used;
    free_mb += node->inventory().memory_mb() > node->mem_allocated_mb()
                   ? node->inventory().memory_mb() - node->mem_allocated_mb()
                   : 0;
  }
  switch (letter) {
    case 'D':
      return absl::StrCat(row.nodes.size());
    case 'N':
      return CompressHostlist(names);
    case 'n':
    case 'o':
      return absl::StrJoin(names, ",");
    case 'C':
      return absl::StrCat(allocated, "/", idle, "/", other, "/",
                          allocated + idle + other);
    case 'e':
      return absl::StrCat(free_mb);
  }
  return "";
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

absl::StatusOr<SinfoFormat> SinfoFormat::Parse(std::string_view format) {
  absl::StatusOr<PercentFormat> parsed = PercentFormat::Parse(format, kLetters);
  if (!parsed.ok()) return parsed.status();
  SinfoFormat sinfo;
  sinfo.format_ = *std::move(parsed);
  return sinfo;
}

std::string SinfoFormat::Header() const { return format_.Header(&HeaderOf); }

std::vector<std::string> SinfoFormat::Rows(
    const std::vector<v1::NodeRecord>& nodes,
    const std::vector<v1::PartitionInfo>& partitions, const SinfoFilter& filter,
    bool per_node) const {
  const std::vector<char> fields = format_.Fields();
  std::vector<std::string> lines;
  for (const v1::PartitionInfo& partition : partitions) {
    if (!filter.partitions.empty() &&
        !filter.partitions.count(partition.name())) {
      continue;
    }
    std::vector<SinfoRow> rows;
    for (const v1::NodeRecord& node : nodes) {
      if (std::find(node.partitions().begin(), node.partitions().end(),
                    partition.name()) == node.partitions().end() ||
          !filter.Matches(node, partition.name())) {
        continue;
      }
      std::vector<std::string> key;
      for (char letter : fields) {
        if (!IsAggregate(letter)) {
          key.push_back(NodeValue(letter, node, partition));
        }
      }
      auto it = per_node ? rows.end()
                         : std::find_if(rows.begin(), rows.end(),
                                        [&](const SinfoRow& row) {
                                          return row.key == key;
                                        });
      if (it == rows.end()) {
        rows.push_back({std::move(key), {}});
        it = rows.end() - 1;
      }
      it->nodes.push_back(&node);
    }
    for (const SinfoRow& row : rows) {
      std::vector<std::string> values;
      std::size_t next_key = 0;
      for (char letter : fields) {
        values.push_back(IsAggregate(letter) ? AggregateValue(letter, row)
                                             : row.key[next_key++]);
      }
      lines.push_back(format_.Render(values));
    }
  }
  return lines;
}

}  // namespace gantry::cli
