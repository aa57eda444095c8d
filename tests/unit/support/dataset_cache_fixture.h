// A dataset cache on scratch directories, with a fake clock and an
// in-process worker acting as this process's own user, for the agent's
// tests of what is built on the cache (pins and holds, the controller's
// prefetch and evict requests). Not thread-safe; one per test case.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "agent/datasets/dataset_cache.h"
#include "common/clock.h"

namespace gantry::agent {

// A directory under /tmp, removed with everything in it at the end.
struct ScratchDirectory {
  ScratchDirectory() {
    char pattern[] = "/tmp/gantry-dataset-scratch-XXXXXX";
    const char* made = ::mkdtemp(pattern);
    REQUIRE(made != nullptr);
    path = made;
  }
  ~ScratchDirectory() { std::filesystem::remove_all(path); }
  std::string path;
};

// A file of `bytes` copies of `fill` at `path`, its directories made.
inline void PutTestFile(const std::string& path, size_t bytes, char fill) {
  std::filesystem::create_directories(
      std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << std::string(bytes, fill);
}

// This process's user, as a stage by an agent that is not root acts.
inline DatasetUser ThisProcessUser() {
  DatasetUser user;
  user.uid = ::getuid();
  user.gid = ::getgid();
  user.name = "tester";
  return user;
}

// Copies through an in-process worker, every copy held at a gate until the
// test opens it; counts the copies begun. Thread-safe.
class GatedWorker : public DatasetWorker {
 public:
  absl::StatusOr<DatasetManifest> Scan(const DatasetUser& user,
                                       const std::string& source,
                                       DatasetVersionBy version_by) override {
    return inner_.Scan(user, source, version_by);
  }
  absl::StatusOr<CopyResult> Copy(const DatasetUser& user,
                                  const std::string& source,
                                  const std::string& version,
                                  DatasetVersionBy version_by,
                                  const std::string& entry,
                                  const std::string& earlier_entry,
                                  const StageProgress& progress) override {
    {
      std::unique_lock lock(mutex_);
      ++copies_;
      opened_.wait(lock, [this] { return open_; });
    }
    return inner_.Copy(user, source, version, version_by, entry, earlier_entry,
                       progress);
  }
  absl::Status Remove(const DatasetUser& user,
                      const std::string& path) override {
    return inner_.Remove(user, path);
  }
  void Open() {
    {
      std::lock_guard lock(mutex_);
      open_ = true;
    }
    opened_.notify_all();
  }
  int copies() {
    std::lock_guard lock(mutex_);
    return copies_;
  }

 private:
  InProcessDatasetWorker inner_;
  std::mutex mutex_;
  std::condition_variable opened_;
  bool open_ = false;
  int copies_ = 0;
};

struct DatasetCacheFixture {
  ScratchDirectory shared;  // the "shared storage" sources live in
  ScratchDirectory local;   // the cache's directory lives in
  InProcessDatasetWorker own_worker;
  FakeClock clock;
  std::unique_ptr<DatasetCache> cache;

  // `worker`: what scans and copies (null: an in-process one).
  explicit DatasetCacheFixture(uint64_t capacity_bytes = 1 << 20,
                               DatasetWorker* worker = nullptr) {
    auto opened = DatasetCache::Open({local.path + "/cache", capacity_bytes, 0},
                                     worker ? *worker : own_worker, clock);
    INFO(opened.status().ToString());
    REQUIRE(opened.ok());
    cache = std::move(*opened);
  }
  // The source tree `name` on shared storage: one file of `bytes`.
  std::string Source(const std::string& name, size_t bytes = 1000) {
    const std::string top = shared.path + "/" + name;
    if (!std::filesystem::exists(top)) PutTestFile(top + "/data", bytes, 'd');
    return top;
  }
  // A prefetch of `name` as ThisProcessUser, held for `job` (0: none) for
  // `hold_ms` from now.
  absl::StatusOr<StagedDataset> PrefetchFor(uint64_t job, int64_t hold_ms,
                                            const std::string& name) {
    return cache->Prefetch(job, clock.NowMs() + hold_ms, ThisProcessUser(),
                           name, Source(name), {});
  }
  std::set<uint64_t> PinsOf(const std::string& name) const {
    for (const CachedDataset& entry : cache->List()) {
      if (entry.name == name) return entry.jobs;
    }
    return {};
  }
  bool Cached(const std::string& name) const {
    for (const CachedDataset& entry : cache->List()) {
      if (entry.name == name) return true;
    }
    return false;
  }
};

}  // namespace gantry::agent
