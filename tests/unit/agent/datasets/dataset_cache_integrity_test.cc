// What the dataset cache trusts, on real temporary directories: a user
// writing into their own cache directory (stray files, a grown or changed
// copy) is removed or charged, so they pass neither their limit nor the
// node's capacity; a restarted cache takes sizes, versions, sources and
// last use from its root-only records, never from the user's tree, and
// drops an entry whose files changed or whose record is missing or
// corrupt; and after a kill at each of the cache's crash points (in a
// child process) it opens consistently.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "agent/datasets/dataset_cache.h"
#include "agent/datasets/dataset_tree.h"
#include "tests/unit/agent/datasets/dataset_test_support.h"

namespace gantry::agent {
namespace dataset_cache_integrity_test {

std::string RecordsDir(Fixture& f) { return Root(f) + "/.records"; }

std::set<std::string> Names(const std::string& dir) {
  std::set<std::string> names;
  std::error_code error;
  for (const auto& item : fs::directory_iterator(dir, error)) {
    names.insert(item.path().filename().string());
  }
  return names;
}

// Blocks the tree at `path` holds on disk, as du counts them.
uint64_t DiskBytes(const std::string& path) {
  uint64_t total = 0;
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0) {
    total += static_cast<uint64_t>(st.st_blocks) * 512;
  }
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(path, error);
       it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (lstat(it->path().c_str(), &st) == 0) {
      total += static_cast<uint64_t>(st.st_blocks) * 512;
    }
  }
  return total;
}

// The books and the disk agree: every listed entry's copy is there, each
// name in the user's directory is a listed entry or a partial copy with a
// record, every record has its files, and no temporary record is left.
void CheckConsistent(Fixture& f) {
  std::set<std::string> listed;
  for (const CachedDataset& d : f.cache->List()) {
    listed.insert(d.name + "." + d.version);
    CHECK(fs::exists(UserDir(f) + "/" + d.name + "." + d.version + "/data"));
  }
  const std::set<std::string> records = Names(RecordsDir(f));
  for (const std::string& record : records) {
    CHECK(record.find(".tmp") == std::string::npos);
  }
  for (const std::string& name : Names(UserDir(f))) {
    INFO(name);
    const std::string suffix = ".partial";
    const bool partial =
        name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
    const std::string entry =
        partial ? name.substr(0, name.size() - suffix.size()) : name;
    CHECK((partial || listed.count(name) == 1));
    CHECK(records.count(std::to_string(getuid()) + "." + entry) == 1);
  }
  CHECK(records.size() == Names(UserDir(f)).size());
}

TEST_CASE("files a user drops into their cache directory are removed",
          "[dataset_cache]") {
  Fixture f(/*capacity=*/3000);
  WriteFile(f.Source("a") + "/x", std::string(1000, 'a'));
  WriteFile(f.Source("b") + "/x", std::string(1000, 'b'));
  auto a = f.cache->Stage(1, Me(), "a", f.Source("a"), {});
  INFO(a.status().ToString());
  REQUIRE(a.ok());
  f.cache->Release(1);
  // Outside the books: a big file, a tree, and a forged "complete" entry
  // of b that claims to be tiny.
  WriteFile(UserDir(f) + "/junk", std::string(20000, 'j'));
  WriteFile(UserDir(f) + "/more/deep/junk", std::string(20000, 'j'));
  auto b_version = ScanDatasetTree(f.Source("b"));
  REQUIRE(b_version.ok());
  const std::string forged = UserDir(f) + "/b." + b_version->version;
  WriteFile(forged + "/data/x", std::string(20000, 'f'));
  WriteFile(forged + "/manifest",
            "version " + b_version->version + "\nbytes 1\nfiles 1\n");
  auto b = f.cache->Stage(2, Me(), "b", f.Source("b"), {});
  INFO(b.status().ToString());
  REQUIRE(b.ok());
  CHECK_FALSE(b->hit);  // the forgery is not served
  CHECK(ReadFile(b->local_path + "/x") == std::string(1000, 'b'));
  CHECK_FALSE(fs::exists(UserDir(f) + "/junk"));
  CHECK_FALSE(fs::exists(UserDir(f) + "/more"));
  CHECK(f.cache->UsedBytes() == 2000);
  // Left on disk: two small copies, nine inodes of a block each; the junk
  // alone held more than 60,000 bytes.
  CHECK(DiskBytes(UserDir(f)) <= 9 * 4096);
  CheckConsistent(f);
}

TEST_CASE("a copy that grows in use counts and is never served again",
          "[dataset_cache]") {
  Fixture f(/*capacity=*/10000, /*per_user=*/3000);
  for (const std::string name : {"a", "b", "c"}) {
    WriteFile(f.Source(name) + "/x", std::string(1000, name[0]));
  }
  auto a = f.cache->Stage(1, Me(), "a", f.Source("a"), {});
  INFO(a.status().ToString());
  REQUIRE(a.ok());
  // Job 1 still runs and its user grows the copy past their limit.
  Append(a->local_path + "/x", 50000);
  auto b = f.cache->Stage(2, Me(), "b", f.Source("b"), {});
  REQUIRE_FALSE(b.ok());
  CHECK(b.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK_THAT(std::string(b.status().message()),
             Catch::Contains("above the per-user limit of 3000"));
  CHECK(f.cache->UsedBytes() >= 51000);
  // The changed copy is not served to another job.
  auto again = f.cache->Stage(3, Me(), "a", f.Source("a"), {});
  REQUIRE_FALSE(again.ok());
  CHECK(again.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(again.status().message()),
             Catch::Contains("was changed while a job used it"));
  // Once job 1 ends it goes, and a fresh copy is staged.
  f.cache->Release(1);
  f.cache->Release(3);
  auto fresh = f.cache->Stage(4, Me(), "a", f.Source("a"), {});
  INFO(fresh.status().ToString());
  REQUIRE(fresh.ok());
  CHECK_FALSE(fresh->hit);
  CHECK(ReadFile(fresh->local_path + "/x") == std::string(1000, 'a'));
  REQUIRE(f.cache->Stage(5, Me(), "b", f.Source("b"), {}).ok());
  CHECK(f.cache->UsedBytes() == 2000);
  CheckConsistent(f);
}

TEST_CASE("the node's capacity holds against a user filling their directory",
          "[dataset_cache]") {
  Fixture f(/*capacity=*/3000);
  WriteFile(f.Source("a") + "/x", std::string(1000, 'a'));
  WriteFile(f.Source("b") + "/x", std::string(1000, 'b'));
  auto a = f.cache->Stage(1, Me(), "a", f.Source("a"), {});
  REQUIRE(a.ok());
  // In use, grown far past the node's capacity.
  Append(a->local_path + "/x", 100000);
  auto b = f.cache->Stage(2, Me(), "b", f.Source("b"), {});
  REQUIRE_FALSE(b.ok());
  CHECK(b.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK_FALSE(
      fs::exists(UserDir(f) + "/b." + ScanDatasetTree(f.Source("b"))->version));
}

// Refuses to remove anything named junk, as a file its owner made
// immutable would be refused.
class StubbornWorker : public InProcessDatasetWorker {
 public:
  absl::Status Remove(const DatasetUser& user,
                      const std::string& path) override {
    if (path.find("junk") != std::string::npos) {
      return absl::PermissionDeniedError("refused");
    }
    return InProcessDatasetWorker::Remove(user, path);
  }
};

TEST_CASE("another user's files that cannot be removed count for the node",
          "[dataset_cache]") {
  ScratchDirectory shared, cache_dir;
  StubbornWorker worker;
  FakeClock clock;
  const std::string root = cache_dir.path + "/cache";
  auto opened = DatasetCache::Open({root, 40000, 0}, worker, clock);
  INFO(opened.status().ToString());
  REQUIRE(opened.ok());
  DatasetCache& cache = **opened;
  DatasetUser other = Me();
  other.uid = 4242;
  other.name = "other";
  WriteFile(shared.path + "/a/x", std::string(1000, 'a'));
  WriteFile(shared.path + "/b/x", std::string(1000, 'b'));
  REQUIRE(cache.Stage(1, other, "a", shared.path + "/a", {}).ok());
  WriteFile(root + "/4242/junk", std::string(60000, 'j'));
  // Another user's miss: their directory is walked, the junk charged.
  auto b = cache.Stage(2, Me(), "b", shared.path + "/b", {});
  REQUIRE_FALSE(b.ok());
  CHECK(b.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(cache.UsedBytes() >= 61000);
  fs::remove(root + "/4242/junk");
  auto again = cache.Stage(3, Me(), "b", shared.path + "/b", {});
  INFO(again.status().ToString());
  REQUIRE(again.ok());
  CHECK(cache.UsedBytes() == 2000);
}

// Makes ENTRY itself, as its user could, while the copy runs.
class RacingWorker : public InProcessDatasetWorker {
 public:
  absl::StatusOr<CopyResult> Copy(const DatasetUser& user,
                                  const std::string& source,
                                  const std::string& version,
                                  DatasetVersionBy version_by,
                                  const std::string& entry,
                                  const std::string& earlier_entry,
                                  const StageProgress& progress) override {
    WriteFile(entry + "/mine", "x");
    return InProcessDatasetWorker::Copy(user, source, version, version_by,
                                        entry, earlier_entry, progress);
  }
};

TEST_CASE("an entry made by its user during the copy is the job's fault",
          "[dataset_cache]") {
  ScratchDirectory shared, cache_dir;
  RacingWorker worker;
  FakeClock clock;
  auto opened = DatasetCache::Open({cache_dir.path + "/cache", 1 << 20, 0},
                                   worker, clock);
  REQUIRE(opened.ok());
  WriteFile(shared.path + "/a/x", "data");
  auto a = (*opened)->Stage(1, Me(), "a", shared.path + "/a", {});
  REQUIRE_FALSE(a.ok());
  CHECK(a.status().code() == absl::StatusCode::kAborted);
  CHECK_THAT(std::string(a.status().message()),
             Catch::Contains("appeared while the dataset was being staged"));
  CHECK_FALSE(DatasetCache::IsNodeFault(a.status()));
  CHECK((*opened)->List().empty());
  CHECK((*opened)->UsedBytes() == 0);
}

TEST_CASE("a restarted cache trusts its records, never the user's tree",
          "[dataset_cache]") {
  Fixture f;
  MakeTree(f.Source("a"), 2, 1000);
  auto a = f.cache->Stage(1, Me(), "a", f.Source("a"), {});
  INFO(a.status().ToString());
  REQUIRE(a.ok());
  f.cache->Release(1);
  const std::string entry = UserDir(f) + "/a." + a->version;
  const std::string shard = a->local_path + "/shard0.bin";
  SECTION("untouched: kept with its size, source and version") {
    f.clock.AdvanceMs(5000);
    f.Reopen();
    REQUIRE(f.cache->List().size() == 1);
    const CachedDataset d = f.cache->List()[0];
    CHECK(d.bytes == a->bytes_total);
    CHECK(d.version == a->version);
    CHECK(d.source == f.Source("a"));
    CHECK(d.last_use_ms == 1'700'000'000'000);
    CHECK(f.cache->Stage(2, Me(), "a", f.Source("a"), {})->hit);
  }
  SECTION("changed in place, same size, mtime put back") {
    const auto mtime = fs::last_write_time(shard);
    fs::permissions(shard, fs::perms::owner_write, fs::perm_options::add);
    WriteFile(shard, std::string(1000, 'Z'));
    fs::last_write_time(shard, mtime);
    f.Reopen();
    CHECK(f.cache->List().empty());
  }
  SECTION("truncated") {
    fs::permissions(shard, fs::perms::owner_write, fs::perm_options::add);
    fs::resize_file(shard, 10);
    f.Reopen();
    CHECK(f.cache->List().empty());
  }
  SECTION("its manifest lies about the size") {
    WriteFile(entry + "/manifest", "version " + a->version + "\nbytes 1\n");
    f.Reopen();
    CHECK(f.cache->List().empty());
  }
  SECTION("an extra file") {
    WriteFile(a->local_path + "/extra", "x");
    f.Reopen();
    CHECK(f.cache->List().empty());
  }
  SECTION("its record removed") {
    fs::remove(RecordsDir(f) + "/" + std::to_string(getuid()) + ".a." +
               a->version);
    f.Reopen();
    CHECK(f.cache->List().empty());
  }
  SECTION("its record corrupt") {
    const std::string record =
        RecordsDir(f) + "/" + std::to_string(getuid()) + ".a." + a->version;
    std::string text = ReadFile(record);
    text.replace(text.find("bytes "), 7, "bytes 9");
    WriteFile(record, text);
    f.Reopen();
    CHECK(f.cache->List().empty());
    CHECK_FALSE(fs::exists(record));
  }
  if (f.cache->List().empty()) {
    CHECK_FALSE(fs::exists(entry));
    CHECK(f.cache->UsedBytes() == 0);
    auto restaged = f.cache->Stage(3, Me(), "a", f.Source("a"), {});
    INFO(restaged.status().ToString());
    REQUIRE(restaged.ok());
    CHECK_FALSE(restaged->hit);
    CHECK(ReadFile(shard) == std::string(1000, 'a'));
  }
  CheckConsistent(f);
}

TEST_CASE("least recently used order survives a restart", "[dataset_cache]") {
  Fixture f(/*capacity=*/2500);
  for (const std::string name : {"a", "b", "c"}) {
    WriteFile(f.Source(name) + "/x", std::string(1000, 'x'));
  }
  REQUIRE(f.cache->Stage(1, Me(), "b", f.Source("b"), {}).ok());
  f.clock.AdvanceMs(1000);
  REQUIRE(f.cache->Stage(2, Me(), "a", f.Source("a"), {}).ok());
  f.cache->Release(1);
  f.cache->Release(2);
  f.Reopen(2500);
  f.clock.AdvanceMs(1000);
  REQUIRE(f.cache->Stage(3, Me(), "c", f.Source("c"), {}).ok());
  std::set<std::string> names;
  for (const CachedDataset& d : f.cache->List()) names.insert(d.name);
  CHECK(names == std::set<std::string>{"a", "c"});
}

// Run only as a child of the next test: opens the cache named by the
// environment and does one thing to it, killed at the armed crash point.
TEST_CASE("dataset cache until the crash point",
          "[.dataset_cache_crash_child]") {
  const char* root = std::getenv("DATASET_TEST_CACHE");
  const char* source = std::getenv("DATASET_TEST_SOURCE");
  const char* what = std::getenv("DATASET_TEST_DO");
  REQUIRE(root != nullptr);
  REQUIRE(source != nullptr);
  REQUIRE(what != nullptr);
  InProcessDatasetWorker worker;
  FakeClock clock;
  auto cache = DatasetCache::Open({root, 1 << 20, 0}, worker, clock);
  REQUIRE(cache.ok());
  if (std::string(what) == "stage") {
    (void)(*cache)->Stage(1, Me(), "d", source, {});
  } else if (std::string(what) == "evict") {
    (void)(*cache)->Evict(getuid(), "d");
  }
}

// Runs the child above with `crash_at` armed; true when it was killed.
bool RunUntilKilled(const std::string& crash_at, const std::string& root,
                    const std::string& source, const std::string& what) {
  return KilledAtCrashPoint(
      "dataset cache until the crash point",
      {"GANTRY_CRASH_AT=" + crash_at, "DATASET_TEST_CACHE=" + root,
       "DATASET_TEST_SOURCE=" + source, "DATASET_TEST_DO=" + what});
}

TEST_CASE("the cache opens consistently after a kill at each crash point",
          "[dataset_cache]") {
  struct Walk {
    std::string crash_at;
    std::string what;
    bool staged_first;  // a complete entry exists before the child runs
    bool junk;          // an unknown file waits in the user's directory
  };
  const Walk walk = GENERATE(
      Walk{"agent.dataset.record_before_rename:1", "stage", false, false},
      Walk{"agent.dataset.after_partial_record", "stage", false, false},
      Walk{"agent.dataset.after_file_copied:2", "stage", false, false},
      Walk{"agent.dataset.after_copy_before_record", "stage", false, false},
      Walk{"agent.dataset.record_before_rename:2", "stage", false, false},
      Walk{"agent.dataset.after_unrecord_before_remove", "evict", true, false},
      Walk{"agent.dataset.before_unknown_removed", "open", false, true});
  INFO(walk.crash_at);
  Fixture f;
  MakeTree(f.Source("d"), 4, 3000);
  if (walk.staged_first) {
    REQUIRE(f.cache->Stage(9, Me(), "d", f.Source("d"), {}).ok());
    f.cache->Release(9);
  }
  if (walk.junk) {
    fs::create_directories(UserDir(f));
    WriteFile(UserDir(f) + "/junk", std::string(5000, 'j'));
  }
  f.cache.reset();
  REQUIRE(RunUntilKilled(walk.crash_at, Root(f), f.Source("d"), walk.what));
  f.Reopen();
  CheckConsistent(f);
  CHECK_FALSE(fs::exists(UserDir(f) + "/junk"));
  // Whatever survived is either a whole entry or counted as a copy to
  // resume; a stage now serves the right bytes.
  auto staged = f.cache->Stage(10, Me(), "d", f.Source("d"), {});
  INFO(staged.status().ToString());
  REQUIRE(staged.ok());
  CHECK(ReadFile(staged->local_path + "/shard3.bin") == std::string(3000, 'd'));
  if (walk.crash_at == "agent.dataset.after_file_copied:2") {
    CHECK(staged->bytes_resumed > 0);  // the partial copy was kept
  }
  CHECK(f.cache->UsedBytes() == staged->bytes_total);
  CheckConsistent(f);
}

TEST_CASE("a partial copy left by a crash is counted until resumed",
          "[dataset_cache]") {
  Fixture f;
  MakeTree(f.Source("d"), 4, 3000);
  f.cache.reset();
  REQUIRE(RunUntilKilled("agent.dataset.after_file_copied:2", Root(f),
                         f.Source("d"), "stage"));
  f.Reopen();
  CHECK(f.cache->List().empty());  // never served
  const uint64_t total = ScanDatasetTree(f.Source("d"))->total_bytes;
  CHECK(f.cache->UsedBytes() >= total);
}

}  // namespace dataset_cache_integrity_test
}  // namespace gantry::agent
