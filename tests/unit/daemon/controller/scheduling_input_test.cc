// The controller's translation of job records into the scheduler's input
// (daemon/controller/scheduling_input.h): what the scheduler is told of a
// job's --dataset-locality and datasets, and of a node's dataset cache.
#include "daemon/controller/scheduling_input.h"

#include <catch2/catch.hpp>

namespace gantry {
namespace {

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

}  // namespace
}  // namespace gantry
