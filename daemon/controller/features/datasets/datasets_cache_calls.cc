// `gantry cache` (list, prefetch, evict) for DatasetsFeature: the listing
// comes from the nodes' last cache reports (dataset_cache_view.h); a
// prefetch or an eviction goes to each node's agent and its call waits,
// off the loop, for the answers (dataset_cache_waits.h).
#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "daemon/controller/features/datasets/datasets_feature.h"

namespace gantry {
namespace {

// A node the request could not reach: failed at once, nothing sent.
v1::DatasetNodeResult Unsent(const std::string& node, const absl::Status& why) {
  v1::DatasetNodeResult result;
  result.set_node(node);
  result.set_done(true);
  result.set_ok(false);
  result.set_message(std::string(why.message()));
  return result;
}

// The request's nodes in name order, each once.
std::vector<std::string> SortedNodes(
    const google::protobuf::RepeatedPtrField<std::string>& nodes) {
  std::vector<std::string> sorted(nodes.begin(), nodes.end());
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  return sorted;
}

}  // namespace

absl::StatusOr<v1::ListDatasetCacheResponse> DatasetsFeature::ListDatasetCache(
    const v1::ListDatasetCacheRequest& request, const Caller& caller) const {
  absl::StatusOr<v1::ListDatasetCacheResponse> response =
      gantry::ListDatasetCache(NodeCaches(), request, caller);
  if (response.ok()) response->set_now_ms(context_.clock().NowMs());
  return response;
}

void DatasetsFeature::PrefetchDataset(const v1::PrefetchDatasetRequest& request,
                                      const Caller& caller, Answer done) {
  const std::vector<std::string> nodes = SortedNodes(request.nodes());
  if (absl::Status known = CheckKnownNodes(NodeCaches(), nodes); !known.ok()) {
    done(known);
    return;
  }
  if (caller.uid == 0) {
    // Agents copy no dataset as root (a job's staging runs as its user):
    // one clear answer here rather than the same refusal from every node.
    done(absl::PermissionDeniedError(
        "a prefetch copies the dataset as you, and the nodes copy none as "
        "root: run gantry cache prefetch as the dataset's user"));
    return;
  }
  log::Info("dataset prefetch requested",
            {{"user", caller.user},
             {"dataset", request.dataset().name()},
             {"path", request.dataset().path()},
             {"nodes", static_cast<uint64_t>(nodes.size())}});
  // The copy is made as the caller, whoever the request says it is for.
  const DatasetOwner owner{caller.uid, caller.gid, caller.user};
  SendAndAwait(
      caller.uid, nodes,
      [&](const std::string& node) {
        return SendPrefetch(node, owner, request.dataset(), 0, 0);
      },
      request.wait_seconds(), std::move(done));
}

void DatasetsFeature::EvictDataset(const v1::EvictDatasetRequest& request,
                                   const Caller& caller, Answer done) {
  std::optional<uint32_t> asked;
  if (request.has_owner_uid()) asked = request.owner_uid();
  absl::StatusOr<uint32_t> owner = CacheOwnerFor(caller, asked, "evict");
  if (!owner.ok()) {
    done(owner.status());
    return;
  }
  const std::vector<NodeCacheState> caches = NodeCaches();
  std::vector<std::string> nodes = SortedNodes(request.nodes());
  if (absl::Status known = CheckKnownNodes(caches, nodes); !known.ok()) {
    done(known);
    return;
  }
  if (nodes.empty()) {
    nodes = NodesHoldingDataset(caches, *owner, request.name());
    if (nodes.empty()) {
      done(absl::NotFoundError(absl::StrCat(
          "no node's cache holds dataset ", request.name(),
          *owner == caller.uid ? " of yours" : absl::StrCat(" of uid ", *owner),
          " (gantry cache list shows what is cached)")));
      return;
    }
  }
  log::Info("dataset eviction requested",
            {{"user", caller.user},
             {"owner", *owner},
             {"dataset", request.name()},
             {"nodes", static_cast<uint64_t>(nodes.size())}});
  SendAndAwait(
      *owner, nodes,
      [&](const std::string& node) {
        return SendEvict(node, *owner, request.name());
      },
      request.wait_seconds(), std::move(done));
}

void DatasetsFeature::SendAndAwait(
    uint32_t owner_uid, const std::vector<std::string>& nodes,
    const std::function<absl::StatusOr<uint64_t>(const std::string&)>& send,
    uint32_t wait_seconds, Answer done) {
  std::vector<v1::DatasetNodeResult> unsent;
  std::vector<std::pair<std::string, uint64_t>> sent;
  std::vector<uint64_t> ids;
  for (const std::string& node : nodes) {
    absl::StatusOr<uint64_t> id = send(node);
    if (id.ok()) {
      sent.emplace_back(node, *id);
      ids.push_back(*id);
    } else {
      unsent.push_back(Unsent(node, id.status()));
    }
  }
  auto answer = [this, owner_uid, unsent = std::move(unsent),
                 sent = std::move(sent),
                 done = std::move(done)](bool timed_out) {
    v1::DatasetCacheActionResponse response;
    response.set_owner_uid(owner_uid);
    response.set_timed_out(timed_out);
    for (const v1::DatasetNodeResult& result : unsent) {
      *response.add_results() = result;
    }
    for (const auto& [node, id] : sent) {
      *response.add_results() = NodeResultOf(node, id, requests_.Find(id));
    }
    std::sort(
        response.mutable_results()->begin(), response.mutable_results()->end(),
        [](const v1::DatasetNodeResult& a, const v1::DatasetNodeResult& b) {
          return a.node() < b.node();
        });
    done(std::move(response));
  };
  if (wait_seconds == 0 || stopped_) {
    answer(/*timed_out=*/false);
    return;
  }
  waits_.Add(std::move(ids), std::chrono::seconds(wait_seconds), requests_,
             std::move(answer));
}

}  // namespace gantry
