// A checkpoint's write time read from its files' times, on real files.

#include "common/checkpoint_write_time.h"
#include "tests/unit/support/temp_dir.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

namespace gantry {
namespace checkpoint_write_time_test {

namespace fs = std::filesystem;

using gantry::testing::TempDir;

void Write(const std::string& path) { std::ofstream(path) << "weights\n"; }

TEST_CASE("A directory: first file created to last file written",
          "[checkpoint_write_time]") {
  TempDir dir;
  fs::create_directories(dir.path + "/shard");
  Write(dir.path + "/meta.json");
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  Write(dir.path + "/shard/rank0.pt");
  const std::optional<double> seconds = CheckpointWriteSeconds(dir.path);
  REQUIRE(seconds.has_value());
  CHECK(*seconds >= 1.1);
  CHECK(*seconds < 10);
}

TEST_CASE("No files, no such path: nothing", "[checkpoint_write_time]") {
  TempDir dir;
  fs::create_directories(dir.path + "/empty/deeper");
  CHECK_FALSE(CheckpointWriteSeconds(dir.path + "/empty").has_value());
  CHECK_FALSE(CheckpointWriteSeconds(dir.path + "/missing").has_value());
}

TEST_CASE("Symbolic links are not followed", "[checkpoint_write_time]") {
  TempDir dir;
  TempDir elsewhere;
  Write(elsewhere.path + "/old");
  fs::create_directories(dir.path + "/checkpoint");
  fs::create_directory_symlink(elsewhere.path, dir.path + "/checkpoint/link");
  CHECK_FALSE(CheckpointWriteSeconds(dir.path + "/checkpoint").has_value());
}

TEST_CASE("At most max_files files are read", "[checkpoint_write_time]") {
  TempDir dir;
  for (int i = 0; i < 5; ++i) Write(dir.path + "/" + std::to_string(i));
  // One file of an unknown birth reads as nothing; five always give a span.
  CHECK(CheckpointWriteSeconds(dir.path, 5).has_value());
  CHECK(CheckpointWriteSeconds(dir.path, 5).value() < 10);
}

}  // namespace checkpoint_write_time_test
}  // namespace gantry
