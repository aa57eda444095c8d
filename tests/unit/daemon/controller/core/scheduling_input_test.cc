// The controller's translation of job records into the scheduler's input
// (daemon/controller/scheduling_input.h): what the scheduler is told of a
// job's --dataset-locality and datasets, and of a node's dataset cache.
#include "daemon/controller/core/scheduling_input.h"

#include <catch2/catch.hpp>

namespace gantry {
namespace scheduling_input_test {

TEST_CASE("a job's dataset locality reaches the scheduler",
          "[controller][scheduling_input]") {
  v1::JobRecord record;
  record.set_id(7);
  record.mutable_spec()->set_nodes(2);
  CHECK(PendingJobOf(record, nullptr).dataset_locality ==
        DatasetLocality::kTopology);
  record.mutable_spec()->set_dataset_locality(v1::DATASET_LOCALITY_CACHE);
  const PendingJob pending = PendingJobOf(record, nullptr);
  CHECK(pending.dataset_locality == DatasetLocality::kCache);
  CHECK(pending.id == JobId(7));
  CHECK(pending.nodes == 2);
}

v1::CachedDatasetEntry* AddCached(v1::DatasetCacheReport& cache, uint32_t uid,
                                  const std::string& source, uint64_t bytes) {
  v1::CachedDatasetEntry* entry = cache.add_entries();
  entry->set_owner_uid(uid);
  entry->set_source(source);
  entry->set_name("d");
  entry->set_version("v");
  entry->set_bytes(bytes);
  return entry;
}

TEST_CASE("a job's datasets are keyed by its owner and path",
          "[controller][scheduling_input]") {
  v1::JobRecord record;
  record.set_uid(1001);
  record.mutable_spec()->set_nodes(1);
  for (const char* path : {"/shared/b", "/shared/a", "/shared/b"}) {
    v1::DatasetRef* ref = record.mutable_spec()->add_datasets();
    ref->set_name("x");
    ref->set_path(path);
  }
  PendingJob pending = PendingJobOf(record, nullptr);
  REQUIRE(pending.datasets.size() == 2);
  CHECK(pending.datasets[0].key == DatasetKey{1001, "/shared/b"});
  CHECK(pending.datasets[1].key == DatasetKey{1001, "/shared/a"});
  CHECK(pending.datasets[0].bytes == 0);

  v1::DatasetCacheReport cache;
  AddCached(cache, 1001, "/shared/b", 500);
  AddCached(cache, 1002, "/shared/a", 900);  // another user's copy
  DatasetSizes sizes;
  AddDatasetSizes(cache, sizes);
  SetDatasetSizes(sizes, pending);
  CHECK(pending.datasets[0].bytes == 500);
  CHECK(pending.datasets[1].bytes == 0);
}

TEST_CASE("a node's cache report becomes its sorted, unique cached datasets",
          "[controller][scheduling_input]") {
  v1::NodeRecord record;
  record.set_name("n1");
  v1::DatasetCacheReport cache;
  AddCached(cache, 7, "/shared/z", 1);
  AddCached(cache, 7, "/shared/a", 1);
  AddCached(cache, 7, "/shared/z", 1)->set_version("w");  // two versions
  AddCached(cache, 3, "/shared/z", 1);
  AddCached(cache, 7, "", 1);  // found on disk, source unknown
  const NodeSnapshot snapshot =
      NodeSnapshotOf(record, true, NodeUsage{}, nullptr, cache);
  const std::vector<DatasetKey> expected = {
      {3, "/shared/z"}, {7, "/shared/a"}, {7, "/shared/z"}};
  CHECK(snapshot.cached_datasets == expected);
}

std::vector<std::string> Reordered(const std::vector<std::string>& nodes) {
  std::vector<std::string> out;
  for (size_t i : InNodelistOrder(nodes)) out.push_back(nodes[i]);
  return out;
}

TEST_CASE("a job's nodes are laid out in the order of its node list",
          "[controller][scheduling_input]") {
  // A spare numbered above the failed node comes last, not first.
  CHECK(Reordered({"node05", "node02", "node03", "node04"}) ==
        std::vector<std::string>{"node02", "node03", "node04", "node05"});
  // Numbers, not text: node9 before node10.
  CHECK(Reordered({"node10", "node9"}) ==
        std::vector<std::string>{"node9", "node10"});
  // Prefixes in their first appearance, as the compressed list is written
  // ("gpu[7-8],cpu01") and expanded.
  CHECK(Reordered({"gpu8", "cpu01", "gpu7"}) ==
        std::vector<std::string>{"gpu7", "gpu8", "cpu01"});
}

TEST_CASE("the allocation's ranks follow the node list's order",
          "[controller][scheduling_input]") {
  const std::vector<std::string> snapshot = {"node01", "node02", "node03",
                                             "node04", "node05"};
  std::vector<const std::string*> names;
  for (const std::string& name : snapshot) names.push_back(&name);
  JobStart start;
  // The scheduler put the spare (node05) first, as a restart may.
  for (size_t index : {4, 1, 2, 3}) {
    NodeShare share;
    share.node = NodeId(index);
    share.cpus = 2 + static_cast<uint32_t>(index);
    start.shares.push_back(share);
  }
  v1::JobRecord record;
  record.mutable_spec()->set_nodes(4);
  record.mutable_spec()->set_ntasks(6);
  SetAllocation(start, names, record);
  REQUIRE(record.allocation_size() == 4);
  std::vector<std::string> nodes;
  for (const v1::NodeAllocation& a : record.allocation()) {
    nodes.push_back(a.node());
  }
  CHECK(nodes ==
        std::vector<std::string>{"node02", "node03", "node04", "node05"});
  // Each node keeps its own share; ranks count up along the list.
  CHECK(record.allocation(0).cpus() == 3);
  CHECK(record.allocation(3).cpus() == 6);
  CHECK(record.allocation(0).first_rank() == 0);
  CHECK(record.allocation(0).rank_count() == 2);
  CHECK(record.allocation(1).first_rank() == 2);
  CHECK(record.allocation(3).first_rank() == 5);
  CHECK(record.allocation(3).rank_count() == 1);
}

}  // namespace scheduling_input_test
}  // namespace gantry
