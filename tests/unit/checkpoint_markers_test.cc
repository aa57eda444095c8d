// Framework checkpoint markers read from a temp directory.
#include "agent/checkpoint_markers.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <thread>

namespace gantry::agent {
namespace {

struct TempDir {
  TempDir() {
    char pattern[] = "/tmp/gantry-ckpt-test-XXXXXX";
    path = mkdtemp(pattern);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(path + "/" + name) << text;
  }
  std::string path;
};

TEST_CASE("no marker yet", "[checkpoint]") {
  TempDir dir;
  auto marker = ReadCheckpointMarker(dir.path);
  REQUIRE(marker.ok());
  CHECK_FALSE(marker->has_value());
}

TEST_CASE("Megatron-LM marker", "[checkpoint]") {
  TempDir dir;
  dir.Write("latest_checkpointed_iteration.txt", "1500\n");
  auto marker = ReadCheckpointMarker(dir.path);
  REQUIRE(marker.ok());
  REQUIRE(marker->has_value());
  CHECK((*marker)->path == dir.path + "/iter_0001500");
  CHECK((*marker)->step == 1500);
  CHECK((*marker)->source == "megatron");

  dir.Write("latest_checkpointed_iteration.txt", "release");
  marker = ReadCheckpointMarker(dir.path);
  REQUIRE(marker.ok());
  CHECK((*marker)->path == dir.path + "/release");
  CHECK((*marker)->step == -1);
}

TEST_CASE("DeepSpeed marker", "[checkpoint]") {
  TempDir dir;
  dir.Write("latest", "global_step800");
  auto marker = ReadCheckpointMarker(dir.path);
  REQUIRE(marker.ok());
  REQUIRE(marker->has_value());
  CHECK((*marker)->path == dir.path + "/global_step800");
  CHECK((*marker)->step == 800);
  CHECK((*marker)->source == "deepspeed");
}

TEST_CASE("the newest of two markers wins", "[checkpoint]") {
  TempDir dir;
  dir.Write("latest", "global_step800");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  dir.Write("latest_checkpointed_iteration.txt", "900");
  auto marker = ReadCheckpointMarker(dir.path);
  REQUIRE(marker.ok());
  CHECK((*marker)->source == "megatron");
}

TEST_CASE("garbage in a marker is a clear error", "[checkpoint]") {
  TempDir dir;
  dir.Write("latest_checkpointed_iteration.txt", "twelve");
  auto marker = ReadCheckpointMarker(dir.path);
  REQUIRE_FALSE(marker.ok());
  CHECK_THAT(std::string(marker.status().message()),
             Catch::Contains("expected an iteration number"));

  TempDir other;
  other.Write("latest", "../../etc");
  marker = ReadCheckpointMarker(other.path);
  REQUIRE_FALSE(marker.ok());
  CHECK_THAT(std::string(marker.status().message()),
             Catch::Contains("expected a checkpoint tag"));
}

}  // namespace
}  // namespace gantry::agent
