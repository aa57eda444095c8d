#include "cli/views/replication_screen.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/terminal_text.h"

namespace gantry::cli {
namespace {

uint64_t Lag(const v1::ReplicationStatus& replication,
             const v1::ControllerMember& member) {
  return replication.last_index() > member.applied_index()
             ? replication.last_index() - member.applied_index()
             : 0;
}

std::vector<v1::ControllerMember> SortedControllers(
    const v1::ReplicationStatus& replication) {
  std::vector<v1::ControllerMember> controllers(
      replication.controllers().begin(), replication.controllers().end());
  std::sort(controllers.begin(), controllers.end(),
            [](const auto& a, const auto& b) { return a.name() < b.name(); });
  return controllers;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> ReplicationLines(
    const v1::ReplicationStatus& replication) {
  std::vector<std::pair<std::string, std::string>> lines;
  if (!replication.enabled()) return lines;
  lines.emplace_back(
      "Leader",
      absl::StrCat(replication.leader(), ", log at ", replication.last_index(),
                   replication.truncated_through() == 0
                       ? ""
                       : absl::StrCat(", in etcd from ",
                                      replication.truncated_through() + 1)));
  for (const v1::ControllerMember& member : SortedControllers(replication)) {
    const bool leads = member.name() == replication.leader();
    lines.emplace_back(
        lines.size() == 1 ? "Controllers" : "",
        absl::StrCat(
            member.name(), " at ", member.address(), ": ",
            leads ? "leader" : "standby", ", applied ", member.applied_index(),
            leads ? ""
                  : absl::StrCat(", ", Lag(replication, member), " behind")));
    if (member.forged_records() > 0) {
      lines.emplace_back(
          "ALARM",
          absl::StrCat(member.name(), " refused ", member.forged_records(),
                       " record(s) in etcd not sealed with the cluster's "
                       "replication key (last: ",
                       // Whoever forged it chose the key: escaped, as
                       // every field others control.
                       EscapeForTerminal(member.last_forged_key()),
                       "): someone with write access to etcd tampered with "
                       "it; see that controller's log"));
    }
  }
  size_t reachable = 0;
  for (const v1::EtcdMemberStatus& member : replication.etcd()) {
    if (member.reachable()) ++reachable;
  }
  for (const v1::EtcdMemberStatus& member : replication.etcd()) {
    std::string line = absl::StrCat(member.endpoint(), ": ");
    if (!member.reachable()) {
      absl::StrAppend(&line, "unreachable (", member.error(), ")");
    } else {
      absl::StrAppend(&line, member.leader() ? "raft leader" : "follower",
                      member.error().empty() ? "" : ", ", member.error());
    }
    lines.emplace_back(
        &member == &replication.etcd(0)
            ? absl::StrCat("etcd ", reachable, "/", replication.etcd_size())
            : "",
        line);
  }
  return lines;
}

nlohmann::json ReplicationToJson(const v1::ReplicationStatus& replication) {
  if (!replication.enabled()) return nullptr;
  nlohmann::json controllers = nlohmann::json::array();
  for (const v1::ControllerMember& member : SortedControllers(replication)) {
    controllers.push_back(
        {{"name", member.name()},
         {"address", member.address()},
         {"role", member.name() == replication.leader() ? "leader" : "standby"},
         {"applied_index", member.applied_index()},
         {"lag_entries", Lag(replication, member)},
         {"forged_records", member.forged_records()},
         {"last_forged_key", member.last_forged_key()}});
  }
  nlohmann::json etcd = nlohmann::json::array();
  for (const v1::EtcdMemberStatus& member : replication.etcd()) {
    etcd.push_back({{"endpoint", member.endpoint()},
                    {"reachable", member.reachable()},
                    {"raft_leader", member.leader()},
                    {"error", member.error()},
                    {"db_size_bytes", member.db_size_bytes()}});
  }
  return {{"leader", replication.leader()},
          {"last_index", replication.last_index()},
          {"truncated_through", replication.truncated_through()},
          {"prefix", replication.prefix()},
          {"controllers", controllers},
          {"etcd", etcd}};
}

}  // namespace gantry::cli
