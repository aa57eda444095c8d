// What `gantry cache` prints: the listing (one line per cached dataset
// version per node, then each node's totals) and how a prefetch or an
// eviction went on each node, as text or JSON. Names and paths come from
// users and agents: they are escaped for the terminal.
//
// Pure functions of their arguments, thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "gantry/v1/dataset_cache.pb.h"

namespace gantry::cli {

// A uid's user name (its number when it has none).
using UserNameOf = std::function<std::string(uint32_t)>;

// "-" for 0 (never used), else how long before `now_ms`: "40s ago",
// "12m ago", "3h ago", "2d ago".
std::string FormatAge(int64_t now_ms, int64_t then_ms);

// The version as shown in the table: its first 12 characters.
std::string ShortVersion(const std::string& version);

// The copies' table (NODE USER DATASET VERSION SIZE LAST_USE PINNED
// SOURCE) and the nodes' totals (NODE CACHE_USED "of" capacity, COPIES, PINNED,
// AGENT);
// a line saying so where no copy is shown.
std::string CacheListText(const v1::ListDatasetCacheResponse& response,
                          const UserNameOf& user_name);
nlohmann::json CacheListJson(const v1::ListDatasetCacheResponse& response,
                             const UserNameOf& user_name);

// One line per node ("node1: copied 1.2 MiB (version 1a2b3c4d5e6f)",
// "node2: already cached", "node3: failed: why"); `failed` is set when
// any node failed or did not answer in time.
struct CacheActionReport {
  std::string text;
  bool failed = false;
};
CacheActionReport CacheActionText(
    const v1::DatasetCacheActionResponse& response, bool prefetch,
    uint32_t wait_seconds);
nlohmann::json CacheActionJson(const v1::DatasetCacheActionResponse& response,
                               const UserNameOf& user_name);

}  // namespace gantry::cli
