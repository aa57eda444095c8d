// gantry-sim's dataset model (daemon/simulator/dataset_model.h): draws that
// depend only on the seed, the user and the job; node caches with LRU
// eviction that never evicts what a running job reads; and, on a small
// trace, that cache-aware placement reads less from shared storage than
// placement that ignores the caches, at the same switch locality.
#include "daemon/simulator/dataset_model.h"

#include <catch2/catch.hpp>
#include <set>
#include <vector>

#include "daemon/simulator/simulation.h"

namespace gantry::sim {
namespace dataset_model_test {

TraceJob Job(uint64_t id, std::string user, uint32_t gpus = 8,
             int64_t submit_ms = 0, int64_t duration_ms = 1000) {
  TraceJob job;
  job.id = JobId(id);
  job.user = std::move(user);
  job.gpus = gpus;
  job.submit_ms = submit_ms;
  job.duration_ms = duration_ms;
  return job;
}

DatasetNeed Need(std::string path, uint64_t bytes) {
  return DatasetNeed{DatasetKey{1000, std::move(path)}, bytes};
}

TEST_CASE("dataset draws follow the seed, the user and the job",
          "[simulator][datasets]") {
  DatasetModelConfig config;
  config.datasets_per_user = 3;
  config.min_gb = 10;
  config.max_gb = 100;
  std::set<std::string> paths;
  for (uint64_t id = 1; id <= 200; ++id) {
    std::optional<DatasetNeed> need = DatasetOf(config, Job(id, "vc1"));
    REQUIRE(need.has_value());
    CHECK(need->bytes >= 10'000'000'000ULL);
    CHECK(need->bytes <= 100'000'000'000ULL);
    CHECK(need->key.path.rfind("/datasets/vc1/", 0) == 0);
    paths.insert(need->key.path);
    // The same dataset always has the same size, and the draw repeats.
    std::optional<DatasetNeed> again = DatasetOf(config, Job(id, "vc1"));
    CHECK(again->key == need->key);
    CHECK(again->bytes == need->bytes);
  }
  CHECK(paths.size() == 3);
  CHECK(DatasetOf(config, Job(1, "vc2"))->key.path.rfind("/datasets/vc2/", 0) ==
        0);
  config.job_share = 0;
  CHECK_FALSE(DatasetOf(config, Job(1, "vc1")).has_value());
  config.job_share = 1;
  config.datasets_per_user = 0;
  CHECK_FALSE(ValidateDatasetModel(config).ok());
}

TEST_CASE("node caches evict the least recently used, never what runs",
          "[simulator][datasets]") {
  NodeCaches caches(1, 100);
  CHECK_FALSE(caches.Read(0, Need("/a", 40), 1));  // miss, kept
  CHECK_FALSE(caches.Read(0, Need("/b", 40), 2));
  CHECK(caches.Held(0).size() == 2);
  caches.Release(0, DatasetKey{1000, "/b"});
  CHECK(caches.Read(0, Need("/b", 40), 3));  // hit; /a is older but in use
  caches.Release(0, DatasetKey{1000, "/b"});
  // /c needs room: /a is read by a running job, so /b goes.
  CHECK_FALSE(caches.Read(0, Need("/c", 50), 4));
  std::vector<std::string> held;
  for (const DatasetKey& key : caches.Held(0)) held.push_back(key.path);
  CHECK(held == std::vector<std::string>{"/a", "/c"});
  // Nothing can be evicted now: /d is read from shared and not kept.
  CHECK_FALSE(caches.Read(0, Need("/d", 30), 5));
  CHECK(caches.Held(0).size() == 2);
  caches.Release(0, DatasetKey{1000, "/d"});
  CHECK_FALSE(caches.Read(0, Need("/d", 30), 6));
  // Bigger than the whole cache: never kept.
  CHECK_FALSE(caches.Read(0, Need("/huge", 101), 7));
  CHECK(caches.Held(0).size() == 2);
}

TEST_CASE("cache-aware placement reads less from shared storage",
          "[simulator][datasets]") {
  // Two leaves of two nodes; users a and b each re-run a 2-node job on
  // their one dataset, and a node caches one dataset. The first two jobs
  // overlap, so a's data lands on one leaf and b's on the other; then one
  // job runs at a time. Ignoring the caches, each goes to the first leaf
  // (the tightest, then the lowest) and evicts the other user's data;
  // cache-aware, each goes back to its own leaf: every later read is a hit.
  std::vector<TraceJob> jobs = {Job(1, "b", 16, 0, 1000),
                                Job(2, "a", 16, 1, 1000)};
  for (uint64_t i = 0; i < 20; ++i) {
    jobs.push_back(Job(3 + i, i % 2 ? "a" : "b", 16,
                       2000 + static_cast<int64_t>(i) * 2000, 1000));
  }
  SimConfig config;
  config.cluster.nodes = 4;
  config.cluster.nodes_per_leaf = 2;
  config.cluster.leaves_per_spine = 2;
  DatasetModelConfig model;
  model.datasets_per_user = 1;
  model.min_gb = model.max_gb = 500;
  model.cache_gb = 600;  // one dataset per node
  config.datasets = model;
  const SimPolicy gantry = StandardPolicies().front();
  absl::StatusOr<PolicyReport> plain = Simulate(jobs, config, gantry);
  config.cache_aware = true;
  absl::StatusOr<PolicyReport> aware = Simulate(jobs, config, gantry);
  REQUIRE(plain.ok());
  REQUIRE(aware.ok());
  constexpr uint64_t kRead = 2 * 500'000'000'000ULL;  // one job's nodes
  CHECK(plain->dataset_bytes == 22 * kRead);
  CHECK(aware->dataset_bytes == 22 * kRead);
  // Ignoring caches: the first two miss, job 3 (b on b's leaf) hits, then
  // every job misses. Cache-aware: only the first two miss.
  CHECK(plain->shared_bytes == 21 * kRead);
  CHECK(aware->shared_bytes == 2 * kRead);
  CHECK(plain->fewest_leaves_share == 1.0);
  CHECK(aware->fewest_leaves_share == 1.0);
}

}  // namespace dataset_model_test
}  // namespace gantry::sim
