// `gantry cache` and the cache part of `gantry status`, built from the
// nodes' last cache reports (agent.proto DatasetCacheReport) and from the
// record of prefetches and evictions sent to agents (dataset_requests.h).
//
// Privacy: another user's dataset names and source paths are theirs; a
// user sees their own copies and every node's totals, an admin sees all.
//
// Pure functions of their arguments (no clock, no I/O), tested apart from
// the controller; thread-safe (no state).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "daemon/controller/core/caller.h"
#include "daemon/controller/features/datasets/dataset_requests.h"
#include "gantry/v1/agent.pb.h"
#include "gantry/v1/dataset_cache.pb.h"

namespace gantry {

// One node as the listing sees it.
struct NodeCacheState {
  std::string node;
  const v1::DatasetCacheReport* report = nullptr;  // its last; never null
  bool connected = false;                          // its agent, now
};

// Whose copies a request acts on: the caller's own unless `requested`
// names another uid, which only an admin may. PERMISSION_DENIED naming
// `action` ("list", "evict") otherwise.
absl::StatusOr<uint32_t> CacheOwnerFor(const Caller& caller,
                                       std::optional<uint32_t> requested,
                                       const char* action);

// NOT_FOUND naming every name of `wanted` that is not a node of `nodes`
// (as a hostlist); OK when all are.
absl::Status CheckKnownNodes(const std::vector<NodeCacheState>& nodes,
                             const std::vector<std::string>& wanted);

// The copies `caller` may see among `nodes` that pass the request's
// filters (nodes, owner, dataset), and the totals of the chosen nodes.
// PERMISSION_DENIED for a user who names another owner; NOT_FOUND for an
// unknown node.
absl::StatusOr<v1::ListDatasetCacheResponse> ListDatasetCache(
    const std::vector<NodeCacheState>& nodes,
    const v1::ListDatasetCacheRequest& request, const Caller& caller);

// The nodes whose last report holds a version of `owner_uid`'s dataset
// `name`, in name order.
std::vector<std::string> NodesHoldingDataset(
    const std::vector<NodeCacheState>& nodes, uint32_t owner_uid,
    const std::string& name);

// `gantry status`: totals over the nodes that report a cache.
v1::DatasetCacheUse SummarizeDatasetCache(
    const std::vector<NodeCacheState>& nodes);

// How the request ended on its node so far; `request` null: no longer
// kept (answered long ago), reported as done without detail.
v1::DatasetNodeResult NodeResultOf(const std::string& node, uint64_t id,
                                   const DatasetRequest* request);

}  // namespace gantry
