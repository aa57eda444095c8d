#include "daemon/controller/features/datasets/dataset_cache_view.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "common/hostlist.h"

namespace gantry {
namespace {

// An agent without a cache directory reports nothing; one with a cache
// reports its size even while it holds nothing.
bool ReportsCache(const v1::DatasetCacheReport& report) {
  return report.capacity_bytes() > 0 || report.entries_size() > 0;
}

v1::NodeDatasetCache NodeTotals(const NodeCacheState& node) {
  v1::NodeDatasetCache totals;
  totals.set_node(node.node);
  totals.set_reported(ReportsCache(*node.report));
  totals.set_connected(node.connected);
  totals.set_capacity_bytes(node.report->capacity_bytes());
  uint64_t used = 0;
  uint32_t pinned = 0;
  for (const v1::CachedDatasetEntry& entry : node.report->entries()) {
    used += entry.bytes();
    if (entry.pinned_by_jobs_size() > 0) ++pinned;
  }
  // An agent that does not count its use itself: the entries' sum.
  totals.set_used_bytes(
      node.report->used_bytes() > 0 ? node.report->used_bytes() : used);
  totals.set_copies(static_cast<uint32_t>(node.report->entries_size()));
  totals.set_pinned_copies(pinned);
  return totals;
}

}  // namespace

absl::StatusOr<uint32_t> CacheOwnerFor(const Caller& caller,
                                       std::optional<uint32_t> requested,
                                       const char* action) {
  if (!requested.has_value() || *requested == caller.uid) return caller.uid;
  if (!caller.admin) {
    return absl::PermissionDeniedError(
        absl::StrCat("only an admin (root or the admin group) may ", action,
                     " another user's cached datasets; you are ", caller.user));
  }
  return *requested;
}

absl::Status CheckKnownNodes(const std::vector<NodeCacheState>& nodes,
                             const std::vector<std::string>& wanted) {
  std::set<std::string> known;
  for (const NodeCacheState& node : nodes) known.insert(node.node);
  std::vector<std::string> unknown;
  for (const std::string& name : wanted) {
    if (!known.count(name)) unknown.push_back(name);
  }
  if (unknown.empty()) return absl::OkStatus();
  std::sort(unknown.begin(), unknown.end());
  unknown.erase(std::unique(unknown.begin(), unknown.end()), unknown.end());
  return absl::NotFoundError(
      absl::StrCat(unknown.size() == 1 ? "unknown node " : "unknown nodes ",
                   CompressHostlist(unknown), " (gantry nodes -N lists them)"));
}

absl::StatusOr<v1::ListDatasetCacheResponse> ListDatasetCache(
    const std::vector<NodeCacheState>& nodes,
    const v1::ListDatasetCacheRequest& request, const Caller& caller) {
  std::optional<uint32_t> asked;
  if (request.has_owner_uid()) asked = request.owner_uid();
  absl::StatusOr<uint32_t> owner = CacheOwnerFor(caller, asked, "list");
  if (!owner.ok()) return owner.status();
  const std::vector<std::string> wanted(request.nodes().begin(),
                                        request.nodes().end());
  if (absl::Status known = CheckKnownNodes(nodes, wanted); !known.ok()) {
    return known;
  }
  const std::set<std::string> chosen(wanted.begin(), wanted.end());
  // An admin who names nobody sees every user's copies.
  const bool everyone = caller.admin && !request.has_owner_uid();
  v1::ListDatasetCacheResponse response;
  for (const NodeCacheState& node : nodes) {
    if (!chosen.empty() && !chosen.count(node.node)) continue;
    *response.add_nodes() = NodeTotals(node);
    for (const v1::CachedDatasetEntry& entry : node.report->entries()) {
      if (!everyone && entry.owner_uid() != *owner) continue;
      if (!request.dataset().empty() && entry.name() != request.dataset()) {
        continue;
      }
      v1::CachedDatasetCopy& copy = *response.add_copies();
      copy.set_node(node.node);
      copy.set_owner_uid(entry.owner_uid());
      copy.set_name(entry.name());
      copy.set_version(entry.version());
      copy.set_bytes(entry.bytes());
      copy.set_last_use_ms(entry.last_use_ms());
      *copy.mutable_pinned_by_jobs() = entry.pinned_by_jobs();
      copy.set_source(entry.source());
    }
  }
  std::sort(response.mutable_nodes()->begin(), response.mutable_nodes()->end(),
            [](const v1::NodeDatasetCache& a, const v1::NodeDatasetCache& b) {
              return a.node() < b.node();
            });
  std::sort(response.mutable_copies()->begin(),
            response.mutable_copies()->end(),
            [](const v1::CachedDatasetCopy& a, const v1::CachedDatasetCopy& b) {
              return std::forward_as_tuple(a.node(), a.owner_uid(), a.name(),
                                           a.version()) <
                     std::forward_as_tuple(b.node(), b.owner_uid(), b.name(),
                                           b.version());
            });
  return response;
}

std::vector<std::string> NodesHoldingDataset(
    const std::vector<NodeCacheState>& nodes, uint32_t owner_uid,
    const std::string& name) {
  std::vector<std::string> holding;
  for (const NodeCacheState& node : nodes) {
    for (const v1::CachedDatasetEntry& entry : node.report->entries()) {
      if (entry.owner_uid() == owner_uid && entry.name() == name) {
        holding.push_back(node.node);
        break;
      }
    }
  }
  std::sort(holding.begin(), holding.end());
  return holding;
}

v1::DatasetCacheUse SummarizeDatasetCache(
    const std::vector<NodeCacheState>& nodes) {
  v1::DatasetCacheUse use;
  std::set<std::tuple<uint32_t, std::string, std::string>> datasets;
  for (const NodeCacheState& node : nodes) {
    if (!ReportsCache(*node.report)) continue;
    const v1::NodeDatasetCache totals = NodeTotals(node);
    use.set_nodes_reporting(use.nodes_reporting() + 1);
    use.set_capacity_bytes(use.capacity_bytes() + totals.capacity_bytes());
    use.set_used_bytes(use.used_bytes() + totals.used_bytes());
    use.set_copies(use.copies() + totals.copies());
    use.set_pinned_copies(use.pinned_copies() + totals.pinned_copies());
    for (const v1::CachedDatasetEntry& entry : node.report->entries()) {
      datasets.emplace(entry.owner_uid(), entry.name(), entry.version());
    }
  }
  use.set_datasets(static_cast<uint32_t>(datasets.size()));
  return use;
}

v1::DatasetNodeResult NodeResultOf(const std::string& node, uint64_t id,
                                   const DatasetRequest* request) {
  v1::DatasetNodeResult result;
  result.set_node(node);
  result.set_request_id(id);
  if (request == nullptr) {
    result.set_done(true);
    result.set_ok(false);
    result.set_message("its answer is no longer kept");
    return result;
  }
  result.set_done(request->done);
  if (!request->done) return result;
  const v1::DatasetCacheResult& answer = request->result;
  result.set_ok(answer.ok());
  result.set_message(answer.message());
  result.set_version(answer.version());
  result.set_bytes_total(answer.bytes_total());
  result.set_bytes_copied(answer.bytes_copied());
  result.set_hit(answer.hit());
  return result;
}

}  // namespace gantry
