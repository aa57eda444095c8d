// The cache report the agent sends (Register, heartbeats): every entry with
// the jobs pinning it, and the cache's capacity and use.
#include "agent/datasets/dataset_cache_report.h"

#include <catch2/catch.hpp>

namespace gantry::agent {
namespace dataset_cache_report_test {

TEST_CASE("the cache report names pinning jobs, capacity and use",
          "[dataset_cache_report]") {
  CachedDataset pinned;
  pinned.uid = 1000;
  pinned.name = "imagenet";
  pinned.version = std::string(32, 'a');
  pinned.bytes = 700;
  pinned.last_use_ms = 1234;
  pinned.jobs = {12, 40};
  pinned.source = "/shared/imagenet";
  CachedDataset free;
  free.uid = 1001;
  free.name = "wiki";
  free.version = std::string(32, 'b');
  free.bytes = 200;
  const v1::DatasetCacheReport report =
      DatasetCacheReportOf({pinned, free}, 5000, 1100);
  CHECK(report.capacity_bytes() == 5000);
  CHECK(report.used_bytes() == 1100);
  REQUIRE(report.entries_size() == 2);
  const v1::CachedDatasetEntry& first = report.entries(0);
  CHECK(first.owner_uid() == 1000);
  CHECK(first.name() == "imagenet");
  CHECK(first.version() == pinned.version);
  CHECK(first.bytes() == 700);
  CHECK(first.last_use_ms() == 1234);
  CHECK(first.source() == "/shared/imagenet");
  CHECK(std::vector<uint64_t>(first.pinned_by_jobs().begin(),
                              first.pinned_by_jobs().end()) ==
        std::vector<uint64_t>{12, 40});
  CHECK(report.entries(1).pinned_by_jobs().empty());
  CHECK(report.entries(1).owner_uid() == 1001);
}

}  // namespace dataset_cache_report_test
}  // namespace gantry::agent
