#include "cli/views/cache_view.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/views/output_format.h"
#include "cli/views/status_screen.h"
#include "common/terminal_text.h"

namespace gantry::cli {
namespace {

std::string JobList(const google::protobuf::RepeatedField<uint64_t>& jobs) {
  if (jobs.empty()) return "-";
  return absl::StrJoin(jobs, ",");
}

std::string UsedOf(uint64_t used, uint64_t capacity) {
  if (capacity == 0) return FormatBytes(used);
  return absl::StrCat(FormatBytes(used), " of ", FormatBytes(capacity), " (",
                      used * 100 / capacity, "%)");
}

}  // namespace

std::string FormatAge(int64_t now_ms, int64_t then_ms) {
  if (then_ms <= 0) return "-";
  const int64_t seconds = std::max<int64_t>(0, (now_ms - then_ms) / 1000);
  if (seconds < 60) return absl::StrCat(seconds, "s ago");
  if (seconds < 3600) return absl::StrCat(seconds / 60, "m ago");
  if (seconds < 86400) return absl::StrCat(seconds / 3600, "h ago");
  return absl::StrCat(seconds / 86400, "d ago");
}

std::string ShortVersion(const std::string& version) {
  return version.size() <= 12 ? version : version.substr(0, 12);
}

std::string CacheListText(const v1::ListDatasetCacheResponse& response,
                          const UserNameOf& user_name) {
  std::string text;
  if (response.copies().empty()) {
    text = "No cached datasets to show.\n";
  } else {
    std::vector<std::vector<std::string>> rows = {
        {"NODE", "USER", "DATASET", "VERSION", "SIZE", "LAST_USE", "PINNED",
         "SOURCE"}};
    for (const v1::CachedDatasetCopy& copy : response.copies()) {
      rows.push_back(
          {EscapeForTerminal(copy.node()),
           EscapeForTerminal(user_name(copy.owner_uid())),
           EscapeForTerminal(copy.name()),
           EscapeForTerminal(ShortVersion(copy.version())),
           FormatBytes(copy.bytes()),
           FormatAge(response.now_ms(), copy.last_use_ms()),
           JobList(copy.pinned_by_jobs()),
           copy.source().empty() ? "-" : EscapeForTerminal(copy.source())});
    }
    text = RenderTable(rows);
  }
  std::vector<std::vector<std::string>> nodes = {
      {"NODE", "CACHE_USED", "COPIES", "PINNED", "AGENT"}};
  for (const v1::NodeDatasetCache& node : response.nodes()) {
    nodes.push_back(
        {EscapeForTerminal(node.node()),
         node.reported() ? UsedOf(node.used_bytes(), node.capacity_bytes())
                         : "no cache",
         absl::StrCat(node.copies()), absl::StrCat(node.pinned_copies()),
         node.connected() ? "connected" : "not connected"});
  }
  if (nodes.size() > 1) absl::StrAppend(&text, "\n", RenderTable(nodes));
  return text;
}

nlohmann::json CacheListJson(const v1::ListDatasetCacheResponse& response,
                             const UserNameOf& user_name) {
  nlohmann::json copies = nlohmann::json::array();
  for (const v1::CachedDatasetCopy& copy : response.copies()) {
    copies.push_back(
        {{"node", copy.node()},
         {"owner_uid", copy.owner_uid()},
         {"user", user_name(copy.owner_uid())},
         {"dataset", copy.name()},
         {"version", copy.version()},
         {"bytes", copy.bytes()},
         {"last_use_ms", copy.last_use_ms()},
         {"last_use_time", FormatTime(copy.last_use_ms())},
         {"pinned_by_jobs", std::vector<uint64_t>(copy.pinned_by_jobs().begin(),
                                                  copy.pinned_by_jobs().end())},
         {"source", copy.source()}});
  }
  nlohmann::json nodes = nlohmann::json::array();
  for (const v1::NodeDatasetCache& node : response.nodes()) {
    nodes.push_back({{"node", node.node()},
                     {"reported", node.reported()},
                     {"connected", node.connected()},
                     {"capacity_bytes", node.capacity_bytes()},
                     {"used_bytes", node.used_bytes()},
                     {"copies", node.copies()},
                     {"pinned_copies", node.pinned_copies()}});
  }
  return {{"copies", copies}, {"nodes", nodes}, {"now_ms", response.now_ms()}};
}

CacheActionReport CacheActionText(
    const v1::DatasetCacheActionResponse& response, bool prefetch,
    uint32_t wait_seconds) {
  CacheActionReport report;
  for (const v1::DatasetNodeResult& result : response.results()) {
    std::string line = EscapeForTerminal(result.node()) + ": ";
    if (!result.done()) {
      if (wait_seconds == 0) {
        line += prefetch ? "prefetch requested" : "eviction requested";
      } else {
        report.failed = true;
        line += absl::StrCat("no answer within ", wait_seconds,
                             " s (the node carries on; gantry cache list "
                             "shows when it is done)");
      }
    } else if (!result.ok()) {
      report.failed = true;
      line += "failed: " + EscapeForTerminal(result.message());
    } else if (!prefetch) {
      line += "evicted";
    } else if (result.hit()) {
      line += absl::StrCat(
          "already cached (", FormatBytes(result.bytes_total()), ", version ",
          EscapeForTerminal(ShortVersion(result.version())), ")");
    } else {
      line +=
          absl::StrCat("copied ", FormatBytes(result.bytes_copied()), " of ",
                       FormatBytes(result.bytes_total()), " (version ",
                       EscapeForTerminal(ShortVersion(result.version())), ")");
    }
    absl::StrAppend(&report.text, line, "\n");
  }
  return report;
}

nlohmann::json CacheActionJson(const v1::DatasetCacheActionResponse& response,
                               const UserNameOf& user_name) {
  nlohmann::json results = nlohmann::json::array();
  for (const v1::DatasetNodeResult& result : response.results()) {
    results.push_back({{"node", result.node()},
                       {"done", result.done()},
                       {"ok", result.ok()},
                       {"message", result.message()},
                       {"request_id", result.request_id()},
                       {"version", result.version()},
                       {"bytes_total", result.bytes_total()},
                       {"bytes_copied", result.bytes_copied()},
                       {"hit", result.hit()}});
  }
  return {{"owner_uid", response.owner_uid()},
          {"user", user_name(response.owner_uid())},
          {"timed_out", response.timed_out()},
          {"results", results}};
}

}  // namespace gantry::cli
