// What the agent tells the controller its dataset cache holds
// (v1::DatasetCacheReport, in Register and in heartbeats after a change):
// the controller prefers nodes holding a job's datasets when it places the
// job, and `gantry cache` / `gantry status` show each node's copies, the
// jobs pinning them, and how full the cache is. Pure; thread-compatible.
#pragma once

#include <cstdint>
#include <vector>

#include "agent/datasets/dataset_cache.h"
#include "gantry/v1/agent.pb.h"

namespace gantry::agent {

// `capacity_bytes`: [agent] cache-size; `used_bytes`: what the cache
// counts as taken (DatasetCache::UsedBytes, copies in progress included).
v1::DatasetCacheReport DatasetCacheReportOf(
    const std::vector<CachedDataset>& entries, uint64_t capacity_bytes,
    uint64_t used_bytes);

}  // namespace gantry::agent
