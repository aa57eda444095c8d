// `gantry cache` as gantryd builds it from the nodes' cache reports
// (daemon/controller/features/datasets/dataset_cache_view.h): who sees which
// copies, the filters, unknown nodes, the nodes holding a dataset, the status
// totals and the per-node results of a prefetch or an eviction.
#include "daemon/controller/features/datasets/dataset_cache_view.h"

#include <catch2/catch.hpp>

namespace gantry {
namespace dataset_cache_view_test {

constexpr uint32_t kAlice = 1001;
constexpr uint32_t kBob = 1002;

v1::CachedDatasetEntry Entry(uint32_t owner, const std::string& name,
                             const std::string& version, uint64_t bytes,
                             std::vector<uint64_t> pins = {}) {
  v1::CachedDatasetEntry entry;
  entry.set_owner_uid(owner);
  entry.set_name(name);
  entry.set_version(version);
  entry.set_bytes(bytes);
  entry.set_last_use_ms(5000);
  entry.set_source("/shared/" + name);
  for (uint64_t job : pins) entry.add_pinned_by_jobs(job);
  return entry;
}

// n1: alice's imagenet (pinned by job 7) and bob's secret; n2: alice's
// imagenet; n3: no cache at all.
struct Cluster {
  v1::DatasetCacheReport n1, n2, n3;
  Cluster() {
    *n1.add_entries() = Entry(kAlice, "imagenet", "v1", 1000, {7});
    *n1.add_entries() = Entry(kBob, "secret", "v9", 500);
    n1.set_capacity_bytes(10000);
    n1.set_used_bytes(1500);
    *n2.add_entries() = Entry(kAlice, "imagenet", "v1", 1000);
    n2.set_capacity_bytes(10000);
  }
  std::vector<NodeCacheState> Nodes() const {
    return {{"n1", &n1, true}, {"n2", &n2, false}, {"n3", &n3, true}};
  }
};

Caller User(uint32_t uid, const std::string& name) {
  return Caller{uid, 100, name, false};
}
Caller Admin() { return Caller{0, 0, "root", true}; }

TEST_CASE("a user sees their own copies and every node's totals",
          "[dataset_cache_view]") {
  const Cluster cluster;
  absl::StatusOr<v1::ListDatasetCacheResponse> listed = ListDatasetCache(
      cluster.Nodes(), v1::ListDatasetCacheRequest(), User(kAlice, "alice"));
  REQUIRE(listed.ok());
  REQUIRE(listed->copies_size() == 2);
  for (const v1::CachedDatasetCopy& copy : listed->copies()) {
    CHECK(copy.owner_uid() == kAlice);
    CHECK(copy.name() == "imagenet");
  }
  CHECK(listed->copies(0).node() == "n1");
  CHECK(listed->copies(0).pinned_by_jobs_size() == 1);
  CHECK(listed->copies(0).source() == "/shared/imagenet");
  // Totals count bob's copy too, without naming it.
  REQUIRE(listed->nodes_size() == 3);
  CHECK(listed->nodes(0).copies() == 2);
  CHECK(listed->nodes(0).used_bytes() == 1500);
  CHECK(listed->nodes(0).pinned_copies() == 1);
  // n2's agent does not count its use: the entries' sum.
  CHECK(listed->nodes(1).used_bytes() == 1000);
  CHECK_FALSE(listed->nodes(1).connected());
  CHECK_FALSE(listed->nodes(2).reported());
  const std::string text = listed->DebugString();
  CHECK(text.find("secret") == std::string::npos);
}

TEST_CASE("a user cannot list another user's copies, an admin can",
          "[dataset_cache_view]") {
  const Cluster cluster;
  v1::ListDatasetCacheRequest request;
  request.set_owner_uid(kBob);
  absl::StatusOr<v1::ListDatasetCacheResponse> refused =
      ListDatasetCache(cluster.Nodes(), request, User(kAlice, "alice"));
  REQUIRE(refused.status().code() == absl::StatusCode::kPermissionDenied);
  CHECK(refused.status().message().find("alice") != std::string::npos);
  absl::StatusOr<v1::ListDatasetCacheResponse> bobs =
      ListDatasetCache(cluster.Nodes(), request, Admin());
  REQUIRE(bobs.ok());
  REQUIRE(bobs->copies_size() == 1);
  CHECK(bobs->copies(0).name() == "secret");
  // Naming oneself is allowed.
  request.set_owner_uid(kAlice);
  CHECK(ListDatasetCache(cluster.Nodes(), request, User(kAlice, "alice"))
            ->copies_size() == 2);
  // An admin naming nobody sees everyone's.
  CHECK(
      ListDatasetCache(cluster.Nodes(), v1::ListDatasetCacheRequest(), Admin())
          ->copies_size() == 3);
}

TEST_CASE("the listing filters by node and dataset, and names unknown nodes",
          "[dataset_cache_view]") {
  const Cluster cluster;
  v1::ListDatasetCacheRequest request;
  request.add_nodes("n2");
  absl::StatusOr<v1::ListDatasetCacheResponse> n2 =
      ListDatasetCache(cluster.Nodes(), request, Admin());
  REQUIRE(n2.ok());
  CHECK(n2->copies_size() == 1);
  CHECK(n2->nodes_size() == 1);
  request.clear_nodes();
  request.set_dataset("secret");
  CHECK(ListDatasetCache(cluster.Nodes(), request, Admin())->copies_size() ==
        1);
  request.add_nodes("n7");
  request.add_nodes("n8");
  absl::StatusOr<v1::ListDatasetCacheResponse> unknown =
      ListDatasetCache(cluster.Nodes(), request, Admin());
  REQUIRE(unknown.status().code() == absl::StatusCode::kNotFound);
  CHECK(unknown.status().message().find("n[7-8]") != std::string::npos);
}

TEST_CASE("an eviction's nodes are those whose report holds the dataset",
          "[dataset_cache_view]") {
  const Cluster cluster;
  CHECK(NodesHoldingDataset(cluster.Nodes(), kAlice, "imagenet") ==
        std::vector<std::string>{"n1", "n2"});
  CHECK(NodesHoldingDataset(cluster.Nodes(), kAlice, "secret").empty());
  CHECK(NodesHoldingDataset(cluster.Nodes(), kBob, "secret") ==
        std::vector<std::string>{"n1"});
}

TEST_CASE("only admins act on another user's datasets",
          "[dataset_cache_view]") {
  CHECK(*CacheOwnerFor(User(kAlice, "alice"), std::nullopt, "evict") == kAlice);
  CHECK(*CacheOwnerFor(User(kAlice, "alice"), kAlice, "evict") == kAlice);
  CHECK(CacheOwnerFor(User(kAlice, "alice"), kBob, "evict").status().code() ==
        absl::StatusCode::kPermissionDenied);
  CHECK(*CacheOwnerFor(Admin(), kBob, "evict") == kBob);
}

TEST_CASE("status sums the nodes that report a cache", "[dataset_cache_view]") {
  const Cluster cluster;
  const v1::DatasetCacheUse use = SummarizeDatasetCache(cluster.Nodes());
  CHECK(use.nodes_reporting() == 2);
  CHECK(use.capacity_bytes() == 20000);
  CHECK(use.used_bytes() == 2500);
  CHECK(use.copies() == 3);
  CHECK(use.datasets() == 2);  // alice's imagenet v1 twice, bob's secret
  CHECK(use.pinned_copies() == 1);
}

TEST_CASE("a node's result follows its request", "[dataset_cache_view]") {
  DatasetRequest request;
  request.node = "n1";
  v1::DatasetNodeResult open = NodeResultOf("n1", 4, &request);
  CHECK_FALSE(open.done());
  CHECK(open.request_id() == 4);
  request.done = true;
  request.result.set_ok(true);
  request.result.set_hit(true);
  request.result.set_bytes_total(77);
  request.result.set_version("abc");
  v1::DatasetNodeResult done = NodeResultOf("n1", 4, &request);
  CHECK(done.done());
  CHECK(done.ok());
  CHECK(done.hit());
  CHECK(done.bytes_total() == 77);
  CHECK(done.version() == "abc");
  v1::DatasetNodeResult gone = NodeResultOf("n1", 4, nullptr);
  CHECK(gone.done());
  CHECK_FALSE(gone.ok());
}

}  // namespace dataset_cache_view_test
}  // namespace gantry
