// The dataset cache on real temporary directories: staging, reuse, change
// detection, an interrupted copy resumed (the copy is killed at a crash
// point in a child process), eviction under pressure, the per-user limit,
// and pins that keep a job's dataset from eviction.
#include "agent/datasets/dataset_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "agent/datasets/dataset_tree.h"
#include "common/clock.h"
#include "tests/unit/agent/datasets/dataset_test_support.h"

namespace gantry::agent {
namespace dataset_cache_test {

TEST_CASE("a staged dataset is a verified copy in a private directory",
          "[dataset_cache]") {
  Fixture f;
  MakeTree(f.Source("train"), 3, 1000);
  std::vector<std::pair<uint64_t, uint64_t>> progress;
  auto staged = f.cache->Stage(7, Me(), "train", f.Source("train"),
                               [&](uint64_t done, uint64_t total) {
                                 progress.emplace_back(done, total);
                               });
  INFO(staged.status().ToString());
  REQUIRE(staged.ok());
  CHECK_FALSE(staged->hit);
  CHECK(staged->bytes_total == 3000 + 8);
  CHECK(staged->bytes_copied == staged->bytes_total);
  CHECK(ReadFile(staged->local_path + "/shard1.bin") == std::string(1000, 'b'));
  CHECK(ReadFile(staged->local_path + "/labels") == "cat\ndog\n");
  CHECK(fs::is_symlink(staged->local_path + "/labels"));
  REQUIRE_FALSE(progress.empty());
  CHECK(progress.back() ==
        std::make_pair(staged->bytes_total, staged->bytes_total));
  struct stat st {};
  REQUIRE(stat((f.cache_dir.path + "/cache").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0711);
  REQUIRE(
      stat((f.cache_dir.path + "/cache/" + std::to_string(getuid())).c_str(),
           &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  CHECK(f.cache->UsedBytes() == staged->bytes_total);
}

TEST_CASE("a second stage of the same content is served from the cache",
          "[dataset_cache]") {
  Fixture f;
  MakeTree(f.Source("train"), 2, 500);
  auto first = f.cache->Stage(1, Me(), "train", f.Source("train"), {});
  INFO(first.status().ToString());
  REQUIRE(first.ok());
  auto second = f.cache->Stage(2, Me(), "train", f.Source("train"), {});
  INFO(second.status().ToString());
  REQUIRE(second.ok());
  CHECK(second->hit);
  CHECK(second->bytes_copied == 0);
  CHECK(second->local_path == first->local_path);
  // A restarted agent finds it on disk.
  f.Reopen();
  auto third = f.cache->Stage(3, Me(), "train", f.Source("train"), {});
  INFO(third.status().ToString());
  REQUIRE(third.ok());
  CHECK(third->hit);
  CHECK(f.cache->Counters().hits == 1);  // counters are per process
}

TEST_CASE("a changed file is a new version, never served stale",
          "[dataset_cache]") {
  Fixture f;
  MakeTree(f.Source("train"), 2, 500);
  auto first = f.cache->Stage(1, Me(), "train", f.Source("train"), {});
  INFO(first.status().ToString());
  REQUIRE(first.ok());
  f.cache->Release(1);
  WriteFile(f.Source("train") + "/shard0.bin", std::string(500, 'z'));
  // Same size, later mtime.
  fs::last_write_time(f.Source("train") + "/shard0.bin",
                      fs::file_time_type::clock::now() + std::chrono::hours(1));
  auto second = f.cache->Stage(2, Me(), "train", f.Source("train"), {});
  INFO(second.status().ToString());
  REQUIRE(second.ok());
  CHECK_FALSE(second->hit);
  CHECK(second->version != first->version);
  CHECK(ReadFile(second->local_path + "/shard0.bin") == std::string(500, 'z'));
  // Only the changed file is read from the source; the others come from
  // the node's copy of the earlier version.
  CHECK(second->bytes_copied == 500);
  CHECK(second->bytes_reused == 500 + 8);
  CHECK(ReadFile(second->local_path + "/shard1.bin") == std::string(500, 'b'));
  CHECK(ReadFile(second->local_path + "/meta/labels.txt") == "cat\ndog\n");
  // The old version, no longer pinned, is gone.
  CHECK_FALSE(fs::exists(first->local_path));
  CHECK(f.cache->List().size() == 1);
}

TEST_CASE("one source directory under two names is one copy",
          "[dataset_cache]") {
  // Placement keys a dataset by its owner and source path; the cache must
  // too, or a job naming it differently copies it again on a node that
  // placement chose because it held it.
  Fixture f;
  MakeTree(f.Source("train"), 2, 500);
  const StagedDataset first = f.StageOk(1, "train", "train");
  const StagedDataset renamed = f.StageOk(2, "corpus", "train");
  CHECK(renamed.hit);
  CHECK(renamed.bytes_copied == 0);
  CHECK(renamed.local_path == first.local_path);
  CHECK(f.cache->List().size() == 1);
  f.cache->Release(1);
  f.cache->Release(2);
  // A new version under the second name replaces the first name's copy:
  // the same dataset, not a second one beside it.
  WriteFile(f.Source("train") + "/shard0.bin", std::string(500, 'z'));
  fs::last_write_time(f.Source("train") + "/shard0.bin",
                      fs::file_time_type::clock::now() + std::chrono::hours(1));
  const StagedDataset changed = f.StageOk(3, "corpus", "train");
  CHECK_FALSE(changed.hit);
  CHECK(changed.bytes_reused == 500 + 8);
  CHECK_FALSE(fs::exists(first.local_path));
  CHECK(f.cache->List().size() == 1);
  // Either name evicts it once it is free.
  f.cache->Release(3);
  CHECK(f.cache->Evict(getuid(), "corpus").ok());
  CHECK(f.cache->List().empty());
}

TEST_CASE("one name over two source directories is two datasets",
          "[dataset_cache]") {
  Fixture f;
  MakeTree(f.Source("a"), 1, 300);
  MakeTree(f.Source("b"), 2, 300);
  const StagedDataset a = f.StageOk(1, "data", "a");
  const StagedDataset b = f.StageOk(2, "data", "b");
  CHECK_FALSE(b.hit);
  CHECK(fs::exists(a.local_path));  // not a version of b's to replace
  CHECK(f.cache->List().size() == 2);
}

TEST_CASE("files are copied several at a time, each one verified",
          "[dataset_cache]") {
  ScratchDirectory shared, cache;
  MakeTree(shared.path + "/d", 40, 70'000);
  auto manifest = ScanDatasetTree(shared.path + "/d");
  REQUIRE(manifest.ok());
  const std::string entry = cache.path + "/d.0123";
  std::mutex progress_mutex;
  uint64_t last_done = 0;
  bool monotonic = true;
  auto copied =
      CopyDatasetTree(shared.path + "/d", *manifest, entry,
                      [&](uint64_t done, uint64_t) {
                        std::lock_guard<std::mutex> lock(progress_mutex);
                        monotonic = monotonic && done >= last_done;
                        last_done = done;
                      },
                      {.parallel_files = 4});
  INFO(copied.status().ToString());
  REQUIRE(copied.ok());
  CHECK(copied->bytes_copied == manifest->total_bytes);
  CHECK(monotonic);
  CHECK(last_done == manifest->total_bytes);
  for (int i = 0; i < 40; ++i) {
    CHECK(ReadFile(DatasetDataPath(entry) + "/shard" + std::to_string(i) +
                   ".bin") ==
          std::string(70'000, static_cast<char>('a' + i % 26)));
  }
  CHECK(CompleteDatasetBytes(entry).value_or(0) == manifest->total_bytes);
}

TEST_CASE("a content version sees a change that kept size and mtime",
          "[dataset_cache]") {
  Fixture f;
  MakeTree(f.Source("train"), 2, 500);
  const std::string shard = f.Source("train") + "/shard0.bin";
  const auto mtime = fs::last_write_time(shard);
  auto first = f.cache->Stage(1, Me(), "train", f.Source("train"), {},
                              DatasetVersionBy::kContent);
  INFO(first.status().ToString());
  REQUIRE(first.ok());
  f.cache->Release(1);
  // What rsync -t or tar leave: new bytes, the same size and mtime.
  WriteFile(shard, std::string(500, 'q'));
  fs::last_write_time(shard, mtime);
  CHECK(ScanDatasetTree(f.Source("train"))->version ==
        ScanDatasetTree(f.Source("train"))->version);
  auto second = f.cache->Stage(2, Me(), "train", f.Source("train"), {},
                               DatasetVersionBy::kContent);
  INFO(second.status().ToString());
  REQUIRE(second.ok());
  CHECK_FALSE(second->hit);
  CHECK(second->version != first->version);
  CHECK(ReadFile(second->local_path + "/shard0.bin") == std::string(500, 'q'));
  // Unchanged content: a hit.
  f.cache->Release(2);
  auto third = f.cache->Stage(3, Me(), "train", f.Source("train"), {},
                              DatasetVersionBy::kContent);
  REQUIRE(third.ok());
  CHECK(third->hit);
}

TEST_CASE("a user's manifest file is the version", "[dataset_cache]") {
  ScratchDirectory shared;
  MakeTree(shared.path + "/d", 1, 10);
  WriteFile(shared.path + "/d/.gantry-manifest", "release 1\n");
  auto before = ScanDatasetTree(shared.path + "/d");
  INFO(before.status().ToString());
  REQUIRE(before.ok());
  fs::last_write_time(shared.path + "/d/shard0.bin",
                      fs::file_time_type::clock::now() + std::chrono::hours(1));
  auto touched = ScanDatasetTree(shared.path + "/d");
  INFO(touched.status().ToString());
  REQUIRE(touched.ok());
  CHECK(touched->version == before->version);
  WriteFile(shared.path + "/d/.gantry-manifest", "release 2\n");
  auto released = ScanDatasetTree(shared.path + "/d");
  INFO(released.status().ToString());
  REQUIRE(released.ok());
  CHECK(released->version != before->version);
}

// Run only as a child of the next test: copies the tree named by the
// environment and is killed at the armed crash point.
TEST_CASE("dataset copy until the crash point", "[.dataset_crash_child]") {
  const char* source = std::getenv("DATASET_TEST_SOURCE");
  const char* entry = std::getenv("DATASET_TEST_ENTRY");
  REQUIRE(source != nullptr);
  REQUIRE(entry != nullptr);
  auto manifest = ScanDatasetTree(source);
  INFO(manifest.status().ToString());
  REQUIRE(manifest.ok());
  // One file at a time, so that the files journaled before the crash are
  // the first in name order (the next test counts on which they are).
  (void)CopyDatasetTree(source, *manifest, entry, {}, {.parallel_files = 1});
}

TEST_CASE("an interrupted copy is never served and resumes",
          "[dataset_cache]") {
  ScratchDirectory shared, cache;
  MakeTree(shared.path + "/d", 5, 4096);
  const std::string entry = cache.path + "/d.0123";
  REQUIRE(
      KilledAtCrashPoint("dataset copy until the crash point",
                         {"GANTRY_CRASH_AT=agent.dataset.after_file_copied:2",
                          "DATASET_TEST_SOURCE=" + shared.path + "/d",
                          "DATASET_TEST_ENTRY=" + entry}));
  // Two files copied and journaled, the rest not: no complete entry.
  CHECK_FALSE(fs::exists(entry));
  CHECK(fs::exists(DatasetPartialPath(entry)));
  CHECK_FALSE(CompleteDatasetBytes(entry).ok());
  // A corrupted journaled file is copied again rather than trusted.
  WriteFile(DatasetDataPath(DatasetPartialPath(entry)) + "/shard0.bin", "x");
  auto manifest = ScanDatasetTree(shared.path + "/d");
  INFO(manifest.status().ToString());
  REQUIRE(manifest.ok());
  auto resumed = CopyDatasetTree(shared.path + "/d", *manifest, entry, {});
  INFO(resumed.status().ToString());
  REQUIRE(resumed.ok());
  // In name order the first two files are meta/labels.txt (8 bytes) and
  // shard0.bin: the first is kept, the corrupted second copied again.
  CHECK(resumed->bytes_resumed == 8);
  CHECK(resumed->bytes_copied == manifest->total_bytes - 8);
  CHECK(ReadFile(DatasetDataPath(entry) + "/shard0.bin") ==
        std::string(4096, 'a'));
  CHECK(CompleteDatasetBytes(entry).value_or(0) == manifest->total_bytes);
  CHECK_FALSE(fs::exists(DatasetPartialPath(entry)));
}

TEST_CASE("least recently used datasets are evicted, pinned ones never",
          "[dataset_cache]") {
  Fixture f(/*capacity=*/2500);
  for (const std::string name : {"a", "b", "c"}) {
    WriteFile(f.Source(name) + "/x", std::string(1000, 'x'));
  }
  REQUIRE(f.cache->Stage(1, Me(), "a", f.Source("a"), {}).ok());
  f.clock.AdvanceMs(1000);
  REQUIRE(f.cache->Stage(2, Me(), "b", f.Source("b"), {}).ok());
  f.clock.AdvanceMs(1000);
  // Both pinned: no room for c.
  auto refused = f.cache->Stage(3, Me(), "c", f.Source("c"), {});
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK_THAT(std::string(refused.status().message()),
             Catch::Contains("in use by running or starting jobs"));
  f.cache->Release(1);
  f.cache->Release(2);
  // b used again, so a is the least recent.
  REQUIRE(f.cache->Stage(4, Me(), "b", f.Source("b"), {})->hit);
  f.clock.AdvanceMs(1000);
  auto c = f.cache->Stage(5, Me(), "c", f.Source("c"), {});
  INFO(c.status().ToString());
  REQUIRE(c.ok());
  std::vector<std::string> names;
  for (const CachedDataset& d : f.cache->List()) names.push_back(d.name);
  CHECK(names == std::vector<std::string>{"b", "c"});
  CHECK(f.cache->Counters().evictions == 1);
  CHECK(f.cache->Counters().bytes_evicted == 1000);
  CHECK(f.cache->UsedBytes() <= 2500);
}

TEST_CASE("a user's cache use is limited", "[dataset_cache]") {
  Fixture f(/*capacity=*/10000, /*per_user=*/1500);
  WriteFile(f.Source("big") + "/x", std::string(2000, 'x'));
  auto big = f.cache->Stage(1, Me(), "big", f.Source("big"), {});
  REQUIRE_FALSE(big.ok());
  CHECK(big.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK_THAT(std::string(big.status().message()),
             Catch::Contains("at most 1500 bytes for user tester"));
  WriteFile(f.Source("a") + "/x", std::string(1000, 'x'));
  WriteFile(f.Source("b") + "/x", std::string(1000, 'x'));
  REQUIRE(f.cache->Stage(2, Me(), "a", f.Source("a"), {}).ok());
  auto b = f.cache->Stage(3, Me(), "b", f.Source("b"), {});
  REQUIRE_FALSE(b.ok());
  CHECK_THAT(std::string(b.status().message()),
             Catch::Contains("above the per-user limit of 1500"));
  f.cache->Release(2);
  REQUIRE(f.cache->Stage(3, Me(), "b", f.Source("b"), {}).ok());
  CHECK(f.cache->List().size() == 1);
}

TEST_CASE("evicting by hand refuses a pinned dataset", "[dataset_cache]") {
  Fixture f;
  WriteFile(f.Source("a") + "/x", "data");
  auto a = f.cache->Stage(1, Me(), "a", f.Source("a"), {});
  INFO(a.status().ToString());
  REQUIRE(a.ok());
  CHECK(f.cache->Evict(getuid(), "a").code() ==
        absl::StatusCode::kFailedPrecondition);
  f.cache->Release(1);
  CHECK(f.cache->Evict(getuid(), "a").ok());
  CHECK_FALSE(fs::exists(a->local_path));
  CHECK(f.cache->Evict(getuid(), "a").code() == absl::StatusCode::kNotFound);
}

TEST_CASE("the listing names each copy's source and changes show",
          "[dataset_cache]") {
  Fixture f;
  WriteFile(f.Source("a") + "/x", "data");
  const uint64_t empty = f.cache->Generation();
  REQUIRE(f.cache->Stage(1, Me(), "a", f.Source("a"), {}).ok());
  const uint64_t staged = f.cache->Generation();
  CHECK(staged != empty);
  std::vector<CachedDataset> list = f.cache->List();
  REQUIRE(list.size() == 1);
  CHECK(list[0].source == f.Source("a"));
  CHECK(list[0].uid == getuid());
  CHECK(list[0].jobs == std::set<uint64_t>{1});
  f.cache->Release(1);
  // The listing names the pinning jobs: unpinning is a change to report.
  const uint64_t released = f.cache->Generation();
  CHECK(released != staged);
  CHECK(f.cache->List()[0].jobs.empty());
  f.cache->Release(1);
  CHECK(f.cache->Generation() == released);  // nothing was pinned
  // A restarted agent reads the source from the entry's record.
  f.Reopen();
  REQUIRE(f.cache->List().size() == 1);
  CHECK(f.cache->List()[0].source == f.Source("a"));
  const uint64_t reopened = f.cache->Generation();
  REQUIRE(f.cache->Stage(2, Me(), "a", f.Source("a"), {})->hit);
  CHECK(f.cache->Generation() != reopened);
  CHECK(f.cache->List()[0].source == f.Source("a"));
  f.cache->Release(2);
  const uint64_t before_evict = f.cache->Generation();
  REQUIRE(f.cache->Evict(getuid(), "a").ok());
  CHECK(f.cache->Generation() != before_evict);
  CHECK(f.cache->List().empty());
}

TEST_CASE("a source that cannot be read is the job's error, naming the file",
          "[dataset_cache]") {
  Fixture f;
  auto missing = f.cache->Stage(1, Me(), "a", f.Source("none"), {});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == absl::StatusCode::kNotFound);
  CHECK_THAT(std::string(missing.status().message()),
             Catch::Contains(f.Source("none")));
  CHECK_FALSE(DatasetCache::IsNodeFault(missing.status()));
  WriteFile(f.Source("fifo") + "/ok", "x");
  REQUIRE(mkfifo((f.Source("fifo") + "/pipe").c_str(), 0600) == 0);
  auto fifo = f.cache->Stage(1, Me(), "a", f.Source("fifo"), {});
  REQUIRE_FALSE(fifo.ok());
  CHECK_THAT(std::string(fifo.status().message()),
             Catch::Contains("/pipe is not a regular file"));
}

TEST_CASE("an unusable cache directory is the node's fault",
          "[dataset_cache]") {
  ScratchDirectory dir;
  InProcessDatasetWorker worker;
  FakeClock clock;
  WriteFile(dir.path + "/file", "x");
  auto opened = DatasetCache::Open({dir.path + "/file", 100, 0}, worker, clock);
  REQUIRE_FALSE(opened.ok());
  CHECK(DatasetCache::IsNodeFault(opened.status()));
  fs::create_directory(dir.path + "/open");
  fs::permissions(dir.path + "/open", fs::perms::all);
  opened = DatasetCache::Open({dir.path + "/open", 100, 0}, worker, clock);
  REQUIRE_FALSE(opened.ok());
  CHECK_THAT(std::string(opened.status().message()),
             Catch::Contains("writable by no one else"));
}

}  // namespace dataset_cache_test
}  // namespace gantry::agent
