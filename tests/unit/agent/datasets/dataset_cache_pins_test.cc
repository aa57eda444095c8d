// Pins and holds of the dataset cache, on a fake clock: a copy staged ahead
// for a waiting job (DatasetCache::Prefetch) is kept from eviction until
// the job's launch here has ended or, if it never comes, until its hold
// lapses; a prefetch for no job pins nothing; two prefetches of the same
// dataset at once copy it once.
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "agent/datasets/dataset_cache.h"
#include "tests/unit/support/dataset_cache_fixture.h"

namespace gantry::agent {
namespace dataset_cache_pins_test {

constexpr int64_t kMinute = 60'000;

TEST_CASE("a copy staged ahead for a job is held until the hold lapses",
          "[dataset_pins]") {
  DatasetCacheFixture f(/*capacity_bytes=*/2500);
  const int64_t start = f.clock.NowMs();
  auto held = f.PrefetchFor(7, kMinute, "a");
  INFO(held.status().ToString());
  REQUIRE(held.ok());
  CHECK_FALSE(held->hit);
  CHECK(held->bytes_copied == 1000);
  REQUIRE(f.PrefetchFor(0, 0, "b").ok());
  CHECK(f.PinsOf("a") == std::set<uint64_t>{7});
  CHECK(f.PinsOf("b").empty());
  // No room for c beside a and b: b (pinned by nothing) goes, a stays.
  f.clock.AdvanceMs(1000);
  REQUIRE(f.cache->Stage(1, ThisProcessUser(), "c", f.Source("c"), {}).ok());
  CHECK(f.Cached("a"));
  CHECK_FALSE(f.Cached("b"));
  f.cache->Release(1);
  // Half a minute on, a is still held: c, though used later, goes.
  f.clock.AdvanceMs(kMinute / 2);
  REQUIRE(f.cache->Stage(2, ThisProcessUser(), "b", f.Source("b"), {}).ok());
  CHECK(f.Cached("a"));
  CHECK_FALSE(f.Cached("c"));
  f.cache->Release(2);
  CHECK(f.cache->Evict(::getuid(), "a").code() ==
        absl::StatusCode::kFailedPrecondition);
  // The job went elsewhere: once the hold's time has passed, the tick
  // drops it, and the listing changes.
  f.clock.SetMs(start + kMinute);
  const uint64_t before = f.cache->Generation();
  f.cache->ExpireHolds();
  CHECK(f.cache->Generation() != before);
  CHECK(f.PinsOf("a").empty());
  f.cache->ExpireHolds();
  CHECK(f.cache->Generation() == before + 1);  // nothing more lapsed
  CHECK(f.cache->Evict(::getuid(), "a").ok());
}

TEST_CASE("a prefetch counts its bytes, not a job's hit or miss",
          "[dataset_pins]") {
  DatasetCacheFixture f;
  REQUIRE(f.PrefetchFor(7, kMinute, "a").ok());
  REQUIRE(f.PrefetchFor(0, 0, "a")->hit);
  CHECK(f.cache->Counters().hits == 0);
  CHECK(f.cache->Counters().misses == 0);
  CHECK(f.cache->Counters().bytes_staged == 1000);
  // The job's own launch then finds it: a hit.
  REQUIRE(f.cache->Stage(7, ThisProcessUser(), "a", f.Source("a"), {})->hit);
  CHECK(f.cache->Counters().hits == 1);
  CHECK(f.cache->Counters().misses == 0);
}

TEST_CASE("a lapsed hold is dropped when room is made, without a tick",
          "[dataset_pins]") {
  DatasetCacheFixture f(/*capacity_bytes=*/1500);
  REQUIRE(f.PrefetchFor(7, 1000, "a").ok());
  auto refused = f.cache->Stage(1, ThisProcessUser(), "b", f.Source("b"), {});
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == absl::StatusCode::kResourceExhausted);
  f.clock.AdvanceMs(1000);
  auto b = f.cache->Stage(1, ThisProcessUser(), "b", f.Source("b"), {});
  INFO(b.status().ToString());
  REQUIRE(b.ok());
  CHECK_FALSE(f.Cached("a"));
}

TEST_CASE("the job's own stage pins a held copy until the job ends",
          "[dataset_pins]") {
  DatasetCacheFixture f;
  REQUIRE(f.PrefetchFor(7, 1000, "a").ok());
  auto launch = f.cache->Stage(7, ThisProcessUser(), "a", f.Source("a"), {});
  REQUIRE(launch.ok());
  CHECK(launch->hit);
  // Long past the hold: the running job's pin has no time limit.
  f.clock.AdvanceMs(10 * kMinute);
  f.cache->ExpireHolds();
  CHECK(f.PinsOf("a") == std::set<uint64_t>{7});
  const absl::Status in_use = f.cache->Evict(::getuid(), "a");
  CHECK(in_use.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(in_use.message()) == "dataset a of uid " +
                                             std::to_string(::getuid()) +
                                             " is in use by job 7");
  f.cache->Release(7);
  CHECK(f.PinsOf("a").empty());
  CHECK(f.cache->Evict(::getuid(), "a").ok());
}

TEST_CASE("a hold ends with the job's launch here, before it lapses",
          "[dataset_pins]") {
  DatasetCacheFixture f;
  REQUIRE(f.PrefetchFor(7, kMinute, "a").ok());
  const absl::Status held = f.cache->Evict(::getuid(), "a");
  CHECK_THAT(std::string(held.message()),
             Catch::Contains("in use by job 7 (staged ahead for it)"));
  const uint64_t before = f.cache->Generation();
  f.cache->Release(7);
  CHECK(f.cache->Generation() != before);
  CHECK(f.PinsOf("a").empty());
  CHECK(f.cache->Evict(::getuid(), "a").ok());
  CHECK(f.cache->Evict(::getuid(), "a").code() == absl::StatusCode::kNotFound);
}

TEST_CASE("a job that stages a newer version lets the held one go",
          "[dataset_pins]") {
  DatasetCacheFixture f;
  const std::string source = f.Source("a");
  auto old_version = f.cache->Prefetch(7, f.clock.NowMs() + kMinute,
                                       ThisProcessUser(), "a", source, {});
  REQUIRE(old_version.ok());
  PutTestFile(source + "/data", 1200, 'e');
  auto launch = f.cache->Stage(7, ThisProcessUser(), "a", source, {});
  INFO(launch.status().ToString());
  REQUIRE(launch.ok());
  CHECK(launch->version != old_version->version);
  const std::vector<CachedDataset> list = f.cache->List();
  REQUIRE(list.size() == 1);
  CHECK(list[0].version == launch->version);
  CHECK(list[0].jobs == std::set<uint64_t>{7});
}

TEST_CASE("two prefetches of the same dataset at once copy it once",
          "[dataset_pins]") {
  GatedWorker worker;
  DatasetCacheFixture f(1 << 20, &worker);
  const std::string source = f.Source("a");
  absl::StatusOr<StagedDataset> first = absl::UnknownError("not run");
  absl::StatusOr<StagedDataset> second = absl::UnknownError("not run");
  std::thread one([&] {
    first = f.cache->Prefetch(0, 0, ThisProcessUser(), "a", source, {});
  });
  while (worker.copies() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::thread two([&] {
    second = f.cache->Prefetch(8, f.clock.NowMs() + kMinute, ThisProcessUser(),
                               "a", source, {});
  });
  // Time for the second to reach the wait for the first copy.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  worker.Open();
  one.join();
  two.join();
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(worker.copies() == 1);
  CHECK_FALSE(first->hit);
  CHECK(second->hit);
  CHECK(first->bytes_copied + second->bytes_copied == 1000);
  // The second was for a waiting job: held for it.
  CHECK(f.PinsOf("a") == std::set<uint64_t>{8});
}

}  // namespace dataset_cache_pins_test
}  // namespace gantry::agent
