// Prefetches and holds under the dataset cache's integrity checks, on real
// temporary directories: a prefetched copy is recorded like a staged one
// (a restarted cache lists it with its source and last use), a prefetch's
// hit is checked before it is served, a held copy is never removed by an
// audit or evicted while its hold lasts, and a changed copy that is only
// held (no running job uses it) is dropped and copied afresh for the job.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "agent/datasets/dataset_cache.h"
#include "tests/unit/agent/datasets/dataset_test_support.h"

namespace gantry::agent {
namespace dataset_cache_prefetch_integrity_test {

constexpr int64_t kHoldMs = 60'000;

absl::StatusOr<StagedDataset> PrefetchFor(Fixture& f, uint64_t job,
                                          const std::string& name) {
  return f.cache->Prefetch(job, f.clock.NowMs() + kHoldMs, Me(), name,
                           f.Source(name), {});
}

const CachedDataset* Find(const std::vector<CachedDataset>& list,
                          const std::string& name) {
  for (const CachedDataset& entry : list) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

TEST_CASE("a prefetched copy is recorded: a restart keeps it, not its hold",
          "[dataset_cache]") {
  Fixture f;
  WriteFile(f.Source("a") + "/x", std::string(1000, 'a'));
  f.clock.AdvanceMs(5000);
  const int64_t prefetched_at = f.clock.NowMs();
  auto prefetched = PrefetchFor(f, 12, "a");
  INFO(prefetched.status().ToString());
  REQUIRE(prefetched.ok());
  REQUIRE(f.cache->List().size() == 1);
  CHECK(f.cache->List()[0].jobs == std::set<uint64_t>{12});
  f.clock.AdvanceMs(1000);
  f.Reopen();
  const std::vector<CachedDataset> list = f.cache->List();
  REQUIRE(list.size() == 1);
  CHECK(list[0].source == f.Source("a"));
  CHECK(list[0].last_use_ms == prefetched_at);
  CHECK(list[0].bytes == 1000);
  CHECK(list[0].jobs.empty());
  auto staged = f.cache->Stage(12, Me(), "a", f.Source("a"), {});
  INFO(staged.status().ToString());
  REQUIRE(staged.ok());
  CHECK(staged->hit);
  CHECK(ReadFile(staged->local_path + "/x") == std::string(1000, 'a'));
}

TEST_CASE("a held copy whose files changed is dropped and copied afresh",
          "[dataset_cache]") {
  Fixture f;
  WriteFile(f.Source("a") + "/x", std::string(1000, 'a'));
  auto held = PrefetchFor(f, 12, "a");
  INFO(held.status().ToString());
  REQUIRE(held.ok());
  // The user writes into the copy held for their waiting job.
  Append(held->local_path + "/x", 5000);
  SECTION("the job's launch") {
    auto staged = f.cache->Stage(12, Me(), "a", f.Source("a"), {});
    INFO(staged.status().ToString());
    REQUIRE(staged.ok());
    CHECK_FALSE(staged->hit);
    CHECK(ReadFile(staged->local_path + "/x") == std::string(1000, 'a'));
    REQUIRE(f.cache->List().size() == 1);
    CHECK(f.cache->List()[0].jobs == std::set<uint64_t>{12});
  }
  SECTION("another prefetch") {
    auto again = f.cache->Prefetch(0, 0, Me(), "a", f.Source("a"), {});
    INFO(again.status().ToString());
    REQUIRE(again.ok());
    CHECK_FALSE(again->hit);
    CHECK(again->bytes_copied == 1000);
    CHECK(ReadFile(again->local_path + "/x") == std::string(1000, 'a'));
    // The hold went with the changed copy; the job stages at its launch.
    REQUIRE(f.cache->List().size() == 1);
    CHECK(f.cache->List()[0].jobs.empty());
  }
  CHECK(f.cache->UsedBytes() == 1000);
}

TEST_CASE("a held copy survives the audit of a miss and making room",
          "[dataset_cache]") {
  Fixture f(/*capacity=*/2500);
  for (const std::string name : {"a", "b", "c"}) {
    WriteFile(f.Source(name) + "/x", std::string(1000, name[0]));
  }
  auto a = PrefetchFor(f, 12, "a");
  REQUIRE(a.ok());
  f.clock.AdvanceMs(1000);
  REQUIRE(f.cache->Stage(1, Me(), "b", f.Source("b"), {}).ok());
  f.cache->Release(1);
  f.clock.AdvanceMs(1000);
  // A miss audits the user's directory (the junk goes) and must evict: the
  // held copy is the least recently used, yet the unpinned one goes.
  WriteFile(UserDir(f) + "/junk", "junk");
  auto c = f.cache->Stage(2, Me(), "c", f.Source("c"), {});
  INFO(c.status().ToString());
  REQUIRE(c.ok());
  CHECK_FALSE(fs::exists(UserDir(f) + "/junk"));
  std::vector<CachedDataset> list = f.cache->List();
  REQUIRE(Find(list, "a") != nullptr);
  CHECK(Find(list, "a")->jobs == std::set<uint64_t>{12});
  CHECK(Find(list, "b") == nullptr);
  CHECK(ReadFile(a->local_path + "/x") == std::string(1000, 'a'));
  const absl::Status evicted = f.cache->Evict(getuid(), "a");
  CHECK(evicted.code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(evicted.message()),
             Catch::Contains("in use by job 12 (staged ahead for it)"));
  // Once the hold lapses, the copy is evicted as any other.
  f.clock.AdvanceMs(kHoldMs);
  f.cache->Release(2);
  REQUIRE(f.cache->Stage(3, Me(), "b", f.Source("b"), {}).ok());
  list = f.cache->List();
  CHECK(Find(list, "a") == nullptr);
  CHECK(Find(list, "c") != nullptr);
  CHECK_FALSE(fs::exists(a->local_path));
}

TEST_CASE("a hold does not keep a changed copy once its running job ends",
          "[dataset_cache]") {
  Fixture f;
  WriteFile(f.Source("a") + "/x", std::string(1000, 'a'));
  WriteFile(f.Source("b") + "/x", std::string(1000, 'b'));
  auto running = f.cache->Stage(1, Me(), "a", f.Source("a"), {});
  REQUIRE(running.ok());
  auto held = PrefetchFor(f, 12, "a");
  REQUIRE(held.ok());
  CHECK(held->hit);
  Append(running->local_path + "/x", 5000);
  // The next miss audits the directory: the copy job 1 uses is marked.
  REQUIRE(f.cache->Stage(2, Me(), "b", f.Source("b"), {}).ok());
  auto refused = PrefetchFor(f, 12, "a");
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(refused.status().message()),
             Catch::Contains("was changed while a job used it"));
  CHECK(f.cache->UsedBytes() >= 7000);
  // Job 1 ends; job 12 only holds the copy, so its launch gets a new one.
  f.cache->Release(1);
  auto staged = f.cache->Stage(12, Me(), "a", f.Source("a"), {});
  INFO(staged.status().ToString());
  REQUIRE(staged.ok());
  CHECK_FALSE(staged->hit);
  CHECK(ReadFile(staged->local_path + "/x") == std::string(1000, 'a'));
  CHECK(f.cache->UsedBytes() == 2000);
}

}  // namespace dataset_cache_prefetch_integrity_test
}  // namespace gantry::agent
