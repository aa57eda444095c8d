// The agent's handling of the controller's dataset cache requests on a real
// cache in scratch directories: a prefetch answered with the copy's
// version and size (then a hit), the same user checks as a launch, a clear
// refusal naming the node, dataset and file, holds for a waiting job,
// evictions answered ok or with why not, and exactly one answer per request
// when they run off the caller's thread.
#include "agent/datasets/dataset_cache_requests.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/support/dataset_cache_fixture.h"
#include "tests/unit/support/fake_user_database.h"

namespace gantry::agent {
namespace dataset_cache_requests_test {

// What an agent that is not root does (acts as itself), or, with
// `as_root`, one that is (checks the user; these tests then stop at the
// check, before anything would be copied as someone else).
struct Handler {
  explicit Handler(DatasetCacheFixture& f, bool as_root = false)
      : requests(std::make_unique<DatasetCacheRequests>(
            f.cache.get(), "",
            DatasetCacheRequestsOptions{.node_name = "n1",
                                        .agent_is_root = as_root,
                                        .agent_uid = ::getuid(),
                                        .users = &users},
            f.clock, [this](const v1::DatasetCacheResult& result) {
              std::lock_guard lock(mutex);
              answers.push_back(result);
            })) {}
  size_t Answered() {
    std::lock_guard lock(mutex);
    return answers.size();
  }
  // Waits for every request in progress to be answered (the destructor
  // does), and returns the answers.
  std::vector<v1::DatasetCacheResult> Finish() {
    requests.reset();
    std::lock_guard lock(mutex);
    return answers;
  }
  FakeUsers users;
  std::mutex mutex;
  std::vector<v1::DatasetCacheResult> answers;
  std::unique_ptr<DatasetCacheRequests> requests;
};

v1::DatasetPrefetch PrefetchOf(uint64_t id, const std::string& name,
                               const std::string& path, uint64_t job = 0,
                               int64_t hold_ms = 0) {
  v1::DatasetPrefetch request;
  request.set_request_id(id);
  request.set_uid(1234);
  request.set_gid(1234);
  request.set_user("alice");
  request.mutable_dataset()->set_name(name);
  request.mutable_dataset()->set_path(path);
  request.set_job_id(job);
  request.set_hold_ms(hold_ms);
  return request;
}

v1::DatasetEvict EvictOf(uint64_t id, uint32_t uid, const std::string& name) {
  v1::DatasetEvict request;
  request.set_request_id(id);
  request.set_owner_uid(uid);
  request.set_name(name);
  return request;
}

TEST_CASE("a prefetch answers with the copy's version and size, then a hit",
          "[dataset_requests]") {
  DatasetCacheFixture f;
  Handler h(f);
  const v1::DatasetCacheResult first =
      h.requests->PrefetchNow(PrefetchOf(5, "train", f.Source("train")));
  INFO(first.message());
  REQUIRE(first.ok());
  CHECK(first.request_id() == 5);
  CHECK(first.version().size() == 32);
  CHECK(first.bytes_total() == 1000);
  CHECK(first.bytes_copied() == 1000);
  CHECK_FALSE(first.hit());
  // A prefetch for no job pins nothing once done.
  CHECK(f.PinsOf("train").empty());
  const v1::DatasetCacheResult again =
      h.requests->PrefetchNow(PrefetchOf(6, "train", f.Source("train")));
  REQUIRE(again.ok());
  CHECK(again.request_id() == 6);
  CHECK(again.hit());
  CHECK(again.bytes_copied() == 0);
  CHECK(again.version() == first.version());
  // Staged as the launch of a job would find it: the same entry.
  auto launch =
      f.cache->Stage(9, ThisProcessUser(), "train", f.Source("train"), {});
  REQUIRE(launch.ok());
  CHECK(launch->hit);
}

TEST_CASE("a prefetch for a waiting job holds the copy for hold_ms",
          "[dataset_requests]") {
  DatasetCacheFixture f;
  Handler h(f);
  REQUIRE(h.requests
              ->PrefetchNow(PrefetchOf(1, "train", f.Source("train"), 12, 5000))
              .ok());
  CHECK(f.PinsOf("train") == std::set<uint64_t>{12});
  const v1::DatasetCacheResult in_use =
      h.requests->EvictNow(EvictOf(2, ::getuid(), "train"));
  CHECK_FALSE(in_use.ok());
  CHECK(in_use.request_id() == 2);
  CHECK(in_use.message() == "dataset train of uid " +
                                std::to_string(::getuid()) +
                                " is in use by job 12 (staged ahead for it) "
                                "on node n1");
  f.clock.AdvanceMs(5000);
  f.cache->ExpireHolds();
  CHECK(f.PinsOf("train").empty());
  const v1::DatasetCacheResult evicted =
      h.requests->EvictNow(EvictOf(3, ::getuid(), "train"));
  INFO(evicted.message());
  CHECK(evicted.ok());
  CHECK(evicted.request_id() == 3);
  CHECK_FALSE(f.Cached("train"));
  const v1::DatasetCacheResult gone =
      h.requests->EvictNow(EvictOf(4, ::getuid(), "train"));
  CHECK_FALSE(gone.ok());
  CHECK(gone.message() == "dataset train of uid " + std::to_string(::getuid()) +
                              " is not cached on node n1");
}

TEST_CASE("a hold too long to count lapses never, and none lapses at once",
          "[dataset_requests]") {
  DatasetCacheFixture f;
  Handler h(f);
  REQUIRE(h.requests
              ->PrefetchNow(PrefetchOf(1, "a", f.Source("a"), 12,
                                       std::numeric_limits<int64_t>::max()))
              .ok());
  REQUIRE(
      h.requests->PrefetchNow(PrefetchOf(2, "b", f.Source("b"), 13, -5)).ok());
  f.clock.AdvanceMs(int64_t{365} * 24 * 3600 * 1000);
  f.cache->ExpireHolds();
  CHECK(f.PinsOf("a") == std::set<uint64_t>{12});
  CHECK(f.PinsOf("b").empty());
}

TEST_CASE("an eviction of a running job's dataset names the job",
          "[dataset_requests]") {
  DatasetCacheFixture f;
  Handler h(f);
  REQUIRE(
      f.cache
          ->Stage(12, ThisProcessUser(), "imagenet", f.Source("imagenet"), {})
          .ok());
  const v1::DatasetCacheResult in_use =
      h.requests->EvictNow(EvictOf(1, ::getuid(), "imagenet"));
  CHECK_FALSE(in_use.ok());
  CHECK(in_use.message() == "dataset imagenet of uid " +
                                std::to_string(::getuid()) +
                                " is in use by job 12 on node n1");
  CHECK(f.Cached("imagenet"));
}

TEST_CASE("a prefetch checks its user as a launch does", "[dataset_requests]") {
  DatasetCacheFixture f;
  Handler h(f, /*as_root=*/true);
  const std::string source = f.Source("train");
  // uid 1234 is unknown here.
  v1::DatasetCacheResult unknown =
      h.requests->PrefetchNow(PrefetchOf(1, "train", source));
  CHECK_FALSE(unknown.ok());
  CHECK(unknown.message() ==
        "dataset train on node n1: user alice (uid 1234) does not exist on "
        "node n1");
  h.users.users[1234] = {"bob", 1234, 1234, "/home/bob", "/bin/sh"};
  v1::DatasetCacheResult other =
      h.requests->PrefetchNow(PrefetchOf(2, "train", source));
  CHECK_FALSE(other.ok());
  CHECK_THAT(other.message(),
             Catch::Contains("uid 1234 is user bob on node n1, not alice"));
  v1::DatasetPrefetch as_root = PrefetchOf(3, "train", source);
  as_root.set_uid(0);
  as_root.set_gid(0);
  as_root.set_user("root");
  h.users.users[0] = {"root", 0, 0, "/home/root", "/bin/sh"};
  v1::DatasetCacheResult root = h.requests->PrefetchNow(as_root);
  CHECK_FALSE(root.ok());
  CHECK(root.message() ==
        "dataset train on node n1: a dataset is not prefetched as root "
        "(uid 0): name its owner");
  CHECK(f.cache->List().empty());
}

TEST_CASE("a prefetch that cannot be staged says so, naming node and file",
          "[dataset_requests]") {
  DatasetCacheFixture f;
  Handler h(f);
  const v1::DatasetCacheResult missing = h.requests->PrefetchNow(
      PrefetchOf(1, "train", f.shared.path + "/nothing-here"));
  CHECK_FALSE(missing.ok());
  CHECK_THAT(missing.message(),
             Catch::StartsWith("dataset train on node n1: ") &&
                 Catch::Contains(f.shared.path + "/nothing-here"));
  // Names and paths as strict as a job's --dataset: the name is a path
  // component in the cache.
  const v1::DatasetCacheResult bad_name =
      h.requests->PrefetchNow(PrefetchOf(2, "../etc", f.Source("train")));
  CHECK_FALSE(bad_name.ok());
  CHECK_THAT(bad_name.message(), Catch::StartsWith("dataset ../etc on node "
                                                   "n1: "));
  const v1::DatasetCacheResult relative =
      h.requests->PrefetchNow(PrefetchOf(3, "train", "data/train"));
  CHECK_FALSE(relative.ok());
  CHECK_THAT(relative.message(), Catch::Contains("absolute"));
  const v1::DatasetCacheResult bad_evict =
      h.requests->EvictNow(EvictOf(4, ::getuid(), "a/b"));
  CHECK_FALSE(bad_evict.ok());
  CHECK_THAT(bad_evict.message(), Catch::StartsWith("cannot evict on node n1"));
  CHECK(f.cache->List().empty());
}

TEST_CASE("a node without a usable cache refuses both requests with why",
          "[dataset_requests]") {
  DatasetCacheFixture f;
  FakeUsers users;
  DatasetCacheRequests requests(
      nullptr, "local cache: cannot create /nope: Permission denied",
      DatasetCacheRequestsOptions{.node_name = "n1",
                                  .agent_is_root = false,
                                  .agent_uid = ::getuid(),
                                  .users = &users},
      f.clock, [](const v1::DatasetCacheResult&) {});
  const std::string why =
      "node n1 has no usable dataset cache: local cache: cannot create "
      "/nope: Permission denied";
  const v1::DatasetCacheResult prefetch =
      requests.PrefetchNow(PrefetchOf(1, "train", f.Source("train")));
  CHECK_FALSE(prefetch.ok());
  CHECK(prefetch.message() == why);
  const v1::DatasetCacheResult evict =
      requests.EvictNow(EvictOf(2, 1234, "train"));
  CHECK_FALSE(evict.ok());
  CHECK(evict.request_id() == 2);
  CHECK(evict.message() == why);
}

TEST_CASE("requests off the caller's thread are answered once each",
          "[dataset_requests]") {
  DatasetCacheFixture f;
  Handler h(f);
  const std::string source = f.Source("train", 200'000);
  // Two at once of the same dataset: one copy, both answered.
  h.requests->Prefetch(PrefetchOf(1, "train", source));
  h.requests->Prefetch(PrefetchOf(2, "train", source));
  h.requests->Evict(EvictOf(3, ::getuid(), "other"));
  const std::vector<v1::DatasetCacheResult> answers = h.Finish();
  REQUIRE(answers.size() == 3);
  std::map<uint64_t, v1::DatasetCacheResult> by_id;
  for (const v1::DatasetCacheResult& answer : answers) {
    by_id[answer.request_id()] = answer;
  }
  REQUIRE(by_id.size() == 3);
  INFO(by_id[1].message() << " / " << by_id[2].message());
  CHECK(by_id[1].ok());
  CHECK(by_id[2].ok());
  CHECK(by_id[1].bytes_copied() + by_id[2].bytes_copied() == 200'000);
  CHECK(by_id[1].hit() != by_id[2].hit());
  CHECK_FALSE(by_id[3].ok());
  CHECK_THAT(by_id[3].message(), Catch::Contains("is not cached on node n1"));
}

TEST_CASE("a burst of prefetches copies two at a time, evictions do not wait",
          "[dataset_requests]") {
  GatedWorker worker;
  DatasetCacheFixture f(1 << 20, &worker);
  Handler h(f);
  const int64_t arrived = f.clock.NowMs();
  for (const std::string name : {"a", "b", "c"}) {
    h.requests->Prefetch(PrefetchOf(name[0], name, f.Source(name), 5, 1000));
  }
  while (worker.copies() < 2) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // The third waits its turn; an eviction meanwhile is answered.
  h.requests->Evict(EvictOf(9, ::getuid(), "d"));
  while (h.Answered() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(worker.copies() == 2);
  CHECK(h.Answered() == 1);
  // c's hold counted from its arrival, not from when its turn came.
  f.clock.SetMs(arrived + 1000);
  worker.Open();
  const std::vector<v1::DatasetCacheResult> answers = h.Finish();
  REQUIRE(answers.size() == 4);
  CHECK(answers[0].request_id() == 9);
  for (size_t i = 1; i < answers.size(); ++i) {
    INFO(answers[i].message());
    CHECK(answers[i].ok());
  }
  CHECK(worker.copies() == 3);
  CHECK(f.PinsOf("c").empty());
}

}  // namespace dataset_cache_requests_test
}  // namespace gantry::agent
