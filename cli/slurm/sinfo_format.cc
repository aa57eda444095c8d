#include "cli/slurm/sinfo_format.h"

#include <pwd.h>

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/output_format.h"
#include "cli/slurm/long_fields.h"
#include "common/hostlist.h"
#include "common/option_values.h"
#include "common/text.h"

namespace gantry::cli {
namespace {

std::string BaseState(const std::string& state) {
  return !state.empty() && state.back() == '*'
             ? state.substr(0, state.size() - 1)
             : state;
}

const char* HeaderOf(char letter) {
  switch (letter) {
    case 'P':
    case 'R':
      return "PARTITION";
    case 'a':
      return "AVAIL";
    case 'l':
      return "TIMELIMIT";
    case 'L':
      return "DEFAULTTIME";
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
    case 'A':
      return "NODES(A/I)";
    case 'F':
      return "NODES(A/I/O/T)";
    case 'G':
      return "GRES";
    case 'm':
      return "MEMORY";
    case 'e':
      return "FREE_MEM";
    case 'f':
      return "AVAIL_FEATURES";
    case 'b':
      return "ACTIVE_FEATURES";
    case 'E':
      return "REASON";
    case 'u':
    case 'U':
      return "USER";
    case 'H':
      return "TIMESTAMP";
    case 'O':
      return "CPU_LOAD";
    case 's':
      return "JOB_SIZE";
    case 'r':
      return "ROOT";
    case 'h':
      return "OVERSUBS";
    case 'g':
      return "GROUPS";
    case 'z':
      return "S:C:T";
    case 'X':
      return "SOCKETS";
    case 'Y':
      return "CORES";
    case 'Z':
      return "THREADS";
    case 'd':
      return "TMP_DISK";
    case 'w':
      return "WEIGHT";
    case 'B':
      return "MAX_CPUS_PER_NODE";
    case 'p':
      return "PRIO_TIER";
    case 'I':
      return "PRIO_JOB_FACTOR";
    case 'M':
      return "PREEMPT_MODE";
    case 'S':
      return "ALLOCNODES";
    case 'v':
      return "VERSION";
    case 'V':
      return "CLUSTER";
  }
  return "";
}

// sinfo -O's names for the letters.
constexpr std::pair<const char*, char> kFields[] = {
    {"AllocNodes", 'S'},
    {"Available", 'a'},
    {"Cluster", 'V'},
    {"Cores", 'Y'},
    {"CPUs", 'c'},
    {"CPUsLoad", 'O'},
    {"CPUsState", 'C'},
    {"DefaultTime", 'L'},
    {"Disk", 'd'},
    {"Features", 'f'},
    {"features_act", 'b'},
    {"FreeMem", 'e'},
    {"Gres", 'G'},
    {"Groups", 'g'},
    {"MaxCPUsPerNode", 'B'},
    {"Memory", 'm'},
    {"NodeAddr", 'o'},
    {"NodeAI", 'A'},
    {"NodeAIOT", 'F'},
    {"NodeHost", 'n'},
    {"NodeList", 'N'},
    {"Nodes", 'D'},
    {"OverSubscribe", 'h'},
    {"Partition", 'P'},
    {"PartitionName", 'R'},
    {"PreemptMode", 'M'},
    {"PriorityJobFactor", 'I'},
    {"PriorityTier", 'p'},
    {"Reason", 'E'},
    {"Root", 'r'},
    {"Size", 's'},
    {"SocketCoreThread", 'z'},
    {"Sockets", 'X'},
    {"StateCompact", 't'},
    {"StateLong", 'T'},
    {"Threads", 'Z'},
    {"Time", 'l'},
    {"TimeStamp", 'H'},
    {"User", 'u'},
    {"UserLong", 'U'},
    {"Version", 'v'},
    {"Weight", 'w'},
};

char FieldLetter(std::string_view name) {
  const std::string lower = absl::AsciiStrToLower(AsAbsl(name));
  for (const auto& [known, letter] : kFields) {
    if (absl::AsciiStrToLower(known) == lower) return letter;
  }
  return 0;
}

std::vector<std::string> FieldNames() {
  std::vector<std::string> names;
  for (const auto& [known, letter] : kFields) names.push_back(known);
  return names;
}

std::string NodeReason(const v1::NodeRecord& node) {
  if (node.health_problems_size() > 0) {
    return absl::StrJoin(node.health_problems(), "; ");
  }
  const std::string& reason =
      node.drained() ? node.drain_reason() : node.reason();
  return reason.empty() ? "none" : reason;
}

// Who set the node's reason: the admin who drained it, or the controller
// for what it decided itself.
std::string ReasonUser(const v1::NodeRecord& node) {
  if (!node.drain_user().empty()) return node.drain_user();
  if (node.drained() || node.state() == v1::NODE_DOWN ||
      node.health_problems_size() > 0) {
    return "gantryd";
  }
  return "Unknown";
}

std::string ReasonTime(const v1::NodeRecord& node) {
  if (node.drain_time_ms() > 0) return FormatTime(node.drain_time_ms());
  if (node.state() == v1::NODE_DOWN && node.last_seen_ms() > 0) {
    return FormatTime(node.last_seen_ms());
  }
  return "Unknown";
}

// Whether a field is summed or listed over a row's nodes instead of being
// part of what groups them.
bool IsAggregate(char letter) {
  return std::string_view("DNnoCeAF").find(letter) != std::string_view::npos;
}

uint32_t Ratio(uint32_t a, uint32_t b) { return b == 0 ? 0 : a / b; }

// One node's value of a grouping field.
std::string NodeValue(char letter, const v1::NodeRecord& node,
                      const v1::PartitionInfo& partition) {
  const v1::NodeInventory& inventory = node.inventory();
  const uint32_t sockets = std::max<uint32_t>(inventory.packages(), 1);
  const uint32_t cores = std::max<uint32_t>(inventory.cores(), 1);
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
    case 'L':
      return partition.default_time_seconds() > 0
                 ? FormatTimeLimit(partition.default_time_seconds())
                 : "n/a";
    case 't':
      return SinfoNodeState(node);
    case 'T':
      return SinfoLongState(SinfoNodeState(node));
    case 'c':
      return absl::StrCat(inventory.cpus());
    case 'G':
      return inventory.gpus_size() > 0
                 ? absl::StrCat("gpu:", inventory.gpus_size())
                 : "(null)";
    case 'm':
      return absl::StrCat(inventory.memory_mb());
    case 'f':
    case 'b':
      return node.features().empty() ? "(null)"
                                     : absl::StrJoin(node.features(), ",");
    case 'E':
      return NodeReason(node);
    case 'u':
      return ReasonUser(node);
    case 'U': {
      const std::string user = ReasonUser(node);
      if (passwd* entry = getpwnam(user.c_str())) {
        return absl::StrCat(user, "(", entry->pw_uid, ")");
      }
      return user;
    }
    case 'H':
      return ReasonTime(node);
    case 'O':
      return "N/A";
    case 's':
      return partition.max_nodes() > 0
                 ? absl::StrCat("1-", partition.max_nodes())
                 : "1-infinite";
    case 'r':
      return "no";
    case 'h':
      return "NO";
    case 'g':
    case 'S':
      return "all";
    case 'z':
      return absl::StrCat(
          sockets, ":", Ratio(cores, sockets), ":",
          std::max<uint32_t>(Ratio(inventory.cpus(), cores), 1));
    case 'X':
      return absl::StrCat(sockets);
    case 'Y':
      return absl::StrCat(Ratio(cores, sockets));
    case 'Z':
      return absl::StrCat(
          std::max<uint32_t>(Ratio(inventory.cpus(), cores), 1));
    case 'd':
      return "0";
    case 'w':
    case 'p':
    case 'I':
      return "1";
    case 'B':
      return "UNLIMITED";
    case 'M':
      return "OFF";
    case 'v':
      return node.agent_version().empty() ? "N/A" : node.agent_version();
    case 'V':
      return "N/A";
  }
  return "";
}

// A row: its partition, grouping values and nodes.
struct SinfoRow {
  const v1::PartitionInfo* partition = nullptr;
  std::vector<std::string> key;
  std::vector<const v1::NodeRecord*> nodes;
};

bool Usable(const v1::NodeRecord& node) {
  return node.state() == v1::NODE_UP && !node.drained() &&
         node.health_problems_size() == 0;
}

std::string AggregateValue(char letter, const SinfoRow& row) {
  std::vector<std::string> names;
  uint64_t allocated = 0, idle = 0, other = 0, free_mb = 0;
  uint32_t nodes_allocated = 0, nodes_idle = 0, nodes_other = 0;
  for (const v1::NodeRecord* node : row.nodes) {
    names.push_back(letter == 'o' ? node->address() : node->name());
    const uint32_t total = node->inventory().cpus();
    const uint32_t used = std::min(node->cpus_allocated(), total);
    const bool usable = Usable(*node);
    allocated += used;
    (usable ? idle : other) += total - used;
    free_mb += node->inventory().memory_mb() > node->mem_allocated_mb()
                   ? node->inventory().memory_mb() - node->mem_allocated_mb()
                   : 0;
    const std::string state = BaseState(SinfoNodeState(*node));
    if (!usable) {
      ++nodes_other;
    } else if (state == "mix" || state == "alloc") {
      ++nodes_allocated;
    } else {
      ++nodes_idle;
    }
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
    case 'A':
      return absl::StrCat(nodes_allocated, "/", nodes_idle);
    case 'F':
      return absl::StrCat(nodes_allocated, "/", nodes_idle, "/", nodes_other,
                          "/", row.nodes.size());
    case 'e':
      return absl::StrCat(free_mb);
  }
  return "";
}

// sinfo's "-t" order, busiest first: Slurm's node state codes (mixed 5,
// allocated 3, idle 2, down 1, unknown 0), drained ones by what they run.
int StateRank(const v1::NodeRecord& node) {
  const std::string state = BaseState(SinfoNodeState(node));
  if (state == "mix") return 5;
  if (state == "alloc" || state == "drng") return 3;
  if (state == "down") return 1;
  if (state == "unk") return 0;
  return 2;
}

}  // namespace

std::string SinfoNodeState(const v1::NodeRecord& node) {
  if (node.state() == v1::NODE_DOWN) return "down*";
  if (node.state() == v1::NODE_STATE_UNSPECIFIED) return "unk*";
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

std::string SinfoLongState(const std::string& state) {
  const std::string base = BaseState(state);
  const std::string suffix = base.size() < state.size() ? "*" : "";
  if (base == "mix") return "mixed" + suffix;
  if (base == "alloc") return "allocated" + suffix;
  if (base == "drain") return "drained" + suffix;
  if (base == "drng") return "draining" + suffix;
  if (base == "resv") return "reserved" + suffix;
  if (base == "unk") return "unknown" + suffix;
  return state;
}

bool SinfoFilter::Matches(const v1::NodeRecord& node,
                          const std::string& partition) const {
  if (!partitions.empty() && !partitions.count(partition)) return false;
  if (!nodes.empty() && !nodes.count(node.name())) return false;
  const std::string full = SinfoNodeState(node);
  const bool dead = !full.empty() && full.back() == '*';
  if ((responding_only && dead) || (dead_only && !dead)) return false;
  const std::string state = BaseState(full);
  if (with_reason && state != "down" && state != "drain" && state != "drng") {
    return false;
  }
  // "drain" as a filter stands for drained and draining, as in sinfo -t.
  return states.empty() || states.count(state) ||
         (state == "drng" && states.count("drain"));
}

absl::StatusOr<SinfoFormat> SinfoFormat::Parse(std::string_view format,
                                               std::vector<char>* unknown) {
  absl::StatusOr<PercentFormat> parsed = PercentFormat::Parse(
      PercentFormat::ExpandAll(format, kSinfoLetters), kSinfoLetters, unknown);
  if (!parsed.ok()) return parsed.status();
  SinfoFormat sinfo;
  sinfo.format_ = *std::move(parsed);
  sinfo.format_.KeepTrailingBlanks();
  return sinfo;
}

absl::StatusOr<SinfoFormat> SinfoFormat::ParseFields(std::string_view fields) {
  absl::StatusOr<std::vector<LongField>> parsed =
      ParseLongFields(fields, &FieldLetter, FieldNames());
  if (!parsed.ok()) return parsed.status();
  SinfoFormat sinfo;
  for (const LongField& field : *parsed) {
    sinfo.format_.AddField(field.letter, field.width, field.right,
                           field.suffix);
  }
  sinfo.format_.KeepTrailingBlanks();
  return sinfo;
}

std::string SinfoFormat::Header() const { return format_.Header(&HeaderOf); }

std::vector<std::vector<std::string>> SinfoFormat::Values(
    const std::vector<v1::NodeRecord>& nodes,
    const std::vector<v1::PartitionInfo>& partitions, const SinfoFilter& filter,
    bool per_node, bool sorted) const {
  const std::vector<char> fields = format_.Fields();
  std::vector<SinfoRow> rows;
  for (const v1::PartitionInfo& partition : partitions) {
    if (!filter.partitions.empty() &&
        !filter.partitions.count(partition.name())) {
      continue;
    }
    const std::size_t first = rows.size();
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
                         : std::find_if(rows.begin() + static_cast<long>(first),
                                        rows.end(), [&](const SinfoRow& row) {
                                          return row.key == key;
                                        });
      if (it == rows.end()) {
        rows.push_back({&partition, std::move(key), {}});
        it = rows.end() - 1;
      }
      it->nodes.push_back(&node);
    }
    if (sorted && !per_node) {
      std::stable_sort(rows.begin() + static_cast<long>(first), rows.end(),
                       [](const SinfoRow& a, const SinfoRow& b) {
                         return StateRank(*a.nodes.front()) >
                                StateRank(*b.nodes.front());
                       });
    }
    if (sorted && rows.size() == first && filter.states.empty() &&
        filter.nodes.empty() && !filter.with_reason) {
      rows.push_back({&partition, {}, {}});  // sinfo's "n/a" row
    }
  }
  if (sorted && per_node) {
    std::stable_sort(rows.begin(), rows.end(),
                     [](const SinfoRow& a, const SinfoRow& b) {
                       return a.nodes.front()->name() < b.nodes.front()->name();
                     });
  }
  std::vector<std::vector<std::string>> values;
  for (const SinfoRow& row : rows) {
    std::vector<std::string> line;
    std::size_t next_key = 0;
    for (char letter : fields) {
      if (row.nodes.empty()) {
        // A partition without nodes: its own fields, n/a for the nodes'.
        if (letter == 'D') {
          line.push_back("0");
        } else if (IsAggregate(letter)) {
          line.push_back(
              letter == 'N' || letter == 'n' || letter == 'o' ? "" : "0/0/0/0");
        } else {
          static const v1::NodeRecord kNone;
          const std::string value = NodeValue(letter, kNone, *row.partition);
          line.push_back(letter == 't' || letter == 'T' ? "n/a" : value);
        }
        continue;
      }
      line.push_back(IsAggregate(letter) ? AggregateValue(letter, row)
                                         : row.key[next_key++]);
    }
    values.push_back(std::move(line));
  }
  return values;
}

std::vector<std::string> SinfoFormat::Rows(
    const std::vector<v1::NodeRecord>& nodes,
    const std::vector<v1::PartitionInfo>& partitions, const SinfoFilter& filter,
    bool per_node) const {
  std::vector<std::string> lines;
  for (const std::vector<std::string>& values :
       Values(nodes, partitions, filter, per_node, false)) {
    lines.push_back(format_.Render(values));
  }
  return lines;
}

std::string SinfoFormat::Table(const std::vector<v1::NodeRecord>& nodes,
                               const std::vector<v1::PartitionInfo>& partitions,
                               const SinfoFilter& filter, bool per_node,
                               bool no_header) const {
  const std::vector<std::vector<std::string>> values =
      Values(nodes, partitions, filter, per_node, true);
  PercentFormat fitted = format_;
  // Slurm's MIN_PART_FIELD_SIZE and MIN_NODE_FIELD_SIZE.
  fitted.FitWidths(values, 9);
  std::string table = no_header ? "" : fitted.Header(&HeaderOf);
  for (const std::vector<std::string>& row : values) {
    table += fitted.Render(row);
  }
  return table;
}

}  // namespace gantry::cli
