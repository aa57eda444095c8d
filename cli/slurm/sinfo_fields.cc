#include "cli/slurm/sinfo_fields.h"

#include <pwd.h>

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/slurm/long_fields.h"
#include "cli/slurm/node_gres.h"
#include "cli/views/output_format.h"
#include "common/option_values.h"
#include "common/text.h"

namespace gantry::cli {
namespace {

// sinfo -O's names for the letters.
const std::vector<FieldName>& SinfoFields() {
  static const std::vector<FieldName>* fields = new std::vector<FieldName>{
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
  return *fields;
}

}  // namespace

char SinfoFieldLetter(std::string_view name) {
  return LetterOfField(name, SinfoFields());
}

std::vector<std::string> SinfoFieldNames() {
  return NamesOfFields(SinfoFields());
}

namespace {

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

uint32_t Ratio(uint32_t a, uint32_t b) { return b == 0 ? 0 : a / b; }

}  // namespace

std::string SinfoNodeValue(char letter, const v1::NodeRecord& node,
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
      return NodeGres(inventory);
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

std::string SinfoBaseState(const std::string& state) {
  return !state.empty() && state.back() == '*'
             ? state.substr(0, state.size() - 1)
             : state;
}

const char* SinfoHeader(char letter) {
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
  const std::string base = SinfoBaseState(state);
  const std::string suffix = base.size() < state.size() ? "*" : "";
  if (base == "mix") return "mixed" + suffix;
  if (base == "alloc") return "allocated" + suffix;
  if (base == "drain") return "drained" + suffix;
  if (base == "drng") return "draining" + suffix;
  if (base == "resv") return "reserved" + suffix;
  if (base == "unk") return "unknown" + suffix;
  return state;
}

}  // namespace gantry::cli
