// gantryd's state directory: created private whatever the umask, tightened
// when others could read it, refused when others could write it.

#include "daemon/store/state_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace gantry {
namespace state_dir_test {

namespace fs = std::filesystem;

mode_t ModeOf(const fs::path& path) {
  struct stat info;
  REQUIRE(stat(path.c_str(), &info) == 0);
  return info.st_mode & 07777;
}

// A private temporary directory, removed at the end; restores the umask.
struct Scratch {
  Scratch() {
    char pattern[] = "/tmp/state_dir_test.XXXXXX";
    REQUIRE(mkdtemp(pattern) != nullptr);
    root = pattern;
    saved_umask = umask(022);
  }
  ~Scratch() {
    umask(saved_umask);
    std::error_code ignored;
    fs::remove_all(root, ignored);
  }
  fs::path root;
  mode_t saved_umask;
};

TEST_CASE(
    "A new state directory is 0700 and new files have no group/other "
    "bits even under umask 022") {
  Scratch scratch;
  const fs::path state = scratch.root / "state";
  RestrictFileCreationMask();
  REQUIRE(PrepareStateDirectory(state.string()).ok());
  CHECK(ModeOf(state) == 0700);
  std::ofstream(state / "file") << "secret";
  CHECK(ModeOf(state / "file") == 0600);
}

TEST_CASE("A state directory others can read is tightened, files included") {
  Scratch scratch;
  const fs::path state = scratch.root / "state";
  fs::create_directories(state / "db");
  std::ofstream(state / "db" / "000001.log") << "script";
  chmod(state.c_str(), 0755);
  chmod((state / "db").c_str(), 0755);
  chmod((state / "db" / "000001.log").c_str(), 0644);
  REQUIRE(PrepareStateDirectory(state.string()).ok());
  CHECK(ModeOf(state) == 0700);
  CHECK(ModeOf(state / "db") == 0700);
  CHECK(ModeOf(state / "db" / "000001.log") == 0600);
}

TEST_CASE("A state directory others can write is refused, and left as is") {
  Scratch scratch;
  const fs::path state = scratch.root / "state";
  fs::create_directories(state);
  for (mode_t mode : {0777, 0770, 0722}) {
    chmod(state.c_str(), mode);
    absl::Status status = PrepareStateDirectory(state.string());
    CHECK(status.code() == absl::StatusCode::kFailedPrecondition);
    CHECK_THAT(std::string(status.message()),
               Catch::Contains(state.string()) &&
                   Catch::Contains("mode 0" + std::to_string(mode / 64) +
                                   std::to_string(mode / 8 % 8) +
                                   std::to_string(mode % 8)));
    CHECK(ModeOf(state) == mode);
  }
}

TEST_CASE("A state directory inside a directory others can write is refused") {
  Scratch scratch;
  const fs::path open = scratch.root / "open";
  fs::create_directories(open);
  chmod(open.c_str(), 0777);
  absl::Status status = PrepareStateDirectory((open / "state").string());
  CHECK(status.code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(status.message()), Catch::Contains(open.string()));
  // Sticky, as /tmp: others cannot replace what is not theirs.
  chmod(open.c_str(), 01777);
  CHECK(PrepareStateDirectory((open / "state").string()).ok());
}

TEST_CASE("The socket's directory stays reachable by every user") {
  Scratch scratch;
  RestrictFileCreationMask();
  const fs::path run = scratch.root / "run" / "gantry";
  REQUIRE(CreateSharedDirectory(run.string()).ok());
  CHECK(ModeOf(run) == 0755);
  CHECK(ModeOf(run.parent_path()) == 0755);
}

}  // namespace state_dir_test
}  // namespace gantry
