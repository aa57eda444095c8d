// Helpers for the dataset cache's own tests: small trees, and a cache
// opened on scratch directories (tests/unit/support/dataset_cache_fixture.h)
// with an in-process worker and a fake clock, that can be reopened as a
// restarted agent would.
#pragma once

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "agent/datasets/dataset_cache.h"
#include "common/clock.h"
#include "tests/unit/support/dataset_cache_fixture.h"

namespace gantry::agent {

namespace fs = std::filesystem;

inline void WriteFile(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A tree of `files` files of `size` bytes each, plus a subdirectory and a
// link.
inline void MakeTree(const std::string& top, int files, size_t size) {
  for (int i = 0; i < files; ++i) {
    WriteFile(top + "/shard" + std::to_string(i) + ".bin",
              std::string(size, static_cast<char>('a' + i % 26)));
  }
  WriteFile(top + "/meta/labels.txt", "cat\ndog\n");
  fs::create_symlink("meta/labels.txt", top + "/labels");
}

// This process's user, as the cache's tests stage.
inline DatasetUser Me() { return ThisProcessUser(); }

struct Fixture {
  ScratchDirectory shared;
  ScratchDirectory cache_dir;
  InProcessDatasetWorker worker;
  FakeClock clock;
  std::unique_ptr<DatasetCache> cache;

  explicit Fixture(uint64_t capacity = 1 << 20, uint64_t per_user = 0) {
    Reopen(capacity, per_user);
  }
  void Reopen(uint64_t capacity = 1 << 20, uint64_t per_user = 0) {
    cache.reset();
    auto opened = DatasetCache::Open(
        {cache_dir.path + "/cache", capacity, per_user}, worker, clock);
    INFO(opened.status().ToString());
    REQUIRE(opened.ok());
    cache = std::move(*opened);
  }
  std::string Source(const std::string& name) {
    return shared.path + "/" + name;
  }
  // Stages the source directory `directory` as `name` for `job`, as this
  // process's user; fails the test case when the stage fails.
  StagedDataset StageOk(uint64_t job, const std::string& name,
                        const std::string& directory) {
    auto staged = cache->Stage(job, Me(), name, Source(directory), {});
    INFO("staging " << name << " from " << directory << ": "
                    << staged.status().ToString());
    REQUIRE(staged.ok());
    return *staged;
  }
};

// The cache's root, and this process's user's directory in it.
inline std::string Root(const Fixture& f) {
  return f.cache_dir.path + "/cache";
}
inline std::string UserDir(const Fixture& f) {
  return Root(f) + "/" + std::to_string(getuid());
}

// Appends `bytes` bytes to the file at `path` (a user writing into a copy).
inline void Append(const std::string& path, size_t bytes) {
  std::ofstream(path, std::ios::binary | std::ios::app)
      << std::string(bytes, 'J');
}

// Runs this test binary's hidden test case `test_case` in a child with
// `env` as its whole environment; true when the child was killed by
// SIGKILL (a crash point armed in `env` was reached).
inline bool KilledAtCrashPoint(const std::string& test_case,
                               std::vector<std::string> env) {
  std::string self = fs::read_symlink("/proc/self/exe").string();
  std::string name = test_case;
  std::vector<char*> env_pointers;
  for (std::string& text : env) env_pointers.push_back(text.data());
  env_pointers.push_back(nullptr);
  std::vector<char*> argv = {self.data(), name.data(), nullptr};
  pid_t pid = 0;
  if (posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv.data(),
                  env_pointers.data()) != 0) {
    return false;
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return false;
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

}  // namespace gantry::agent
