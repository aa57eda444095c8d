// Framework checkpoint markers read from a temp directory, as the agent's
// own user and (when the test runs as root) as an unprivileged user, who
// must not get root's view of files planted as markers.
#include "agent/checkpoint/checkpoint_markers.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/unit/support/nobody_identity.h"
#include "tests/unit/support/skip.h"
#include "tests/unit/support/temp_dir.h"

namespace gantry::agent {
namespace checkpoint_markers_test {

const RankIdentity kAgentItself{};

using gantry::testing::TempDir;

TEST_CASE("no marker yet", "[checkpoint]") {
  TempDir dir;
  auto marker = ReadCheckpointMarker(dir.path, kAgentItself);
  REQUIRE(marker.ok());
  CHECK_FALSE(marker->has_value());
}

TEST_CASE("Megatron-LM marker", "[checkpoint]") {
  TempDir dir;
  dir.Write("latest_checkpointed_iteration.txt", "1500\n");
  auto marker = ReadCheckpointMarker(dir.path, kAgentItself);
  REQUIRE(marker.ok());
  REQUIRE(marker->has_value());
  CHECK((*marker)->path == dir.path + "/iter_0001500");
  CHECK((*marker)->step == 1500);
  CHECK((*marker)->source == "megatron");

  dir.Write("latest_checkpointed_iteration.txt", "release");
  marker = ReadCheckpointMarker(dir.path, kAgentItself);
  REQUIRE(marker.ok());
  CHECK((*marker)->path == dir.path + "/release");
  CHECK((*marker)->step == -1);
}

TEST_CASE("DeepSpeed marker", "[checkpoint]") {
  TempDir dir;
  dir.Write("latest", "global_step800");
  auto marker = ReadCheckpointMarker(dir.path, kAgentItself);
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
  auto marker = ReadCheckpointMarker(dir.path, kAgentItself);
  REQUIRE(marker.ok());
  CHECK((*marker)->source == "megatron");
}

TEST_CASE("garbage in a marker is a clear error", "[checkpoint]") {
  TempDir dir;
  dir.Write("latest_checkpointed_iteration.txt", "twelve");
  auto marker = ReadCheckpointMarker(dir.path, kAgentItself);
  REQUIRE_FALSE(marker.ok());
  CHECK_THAT(std::string(marker.status().message()),
             Catch::Contains("expected an iteration number"));

  TempDir other;
  other.Write("latest", "../../etc");
  marker = ReadCheckpointMarker(other.path, kAgentItself);
  REQUIRE_FALSE(marker.ok());
  CHECK_THAT(std::string(marker.status().message()),
             Catch::Contains("expected a checkpoint tag"));
}

// A checkpoint directory owned by `user`, as a job's would be.
struct UserDir : TempDir {
  explicit UserDir(const RankIdentity& user) {
    ::chmod(path.c_str(), 0755);
    REQUIRE(::chown(path.c_str(), user.uid, user.gid) == 0);
  }
};

// A root-only file whose first line is a secret.
struct RootSecret : TempDir {
  RootSecret() {
    Write("secret", "global_step_TOPSECRET\n");
    ::chmod(path.c_str(), 0755);
    file = path + "/secret";
    ::chmod(file.c_str(), 0600);
  }
  std::string file;
};

TEST_CASE("a marker linked to a root-only file is not read for the user",
          "[checkpoint][privileges]") {
  std::optional<RankIdentity> user = NobodyIdentity();
  if (!user) GANTRY_SKIP("needs root and the nobody user");
  RootSecret secret;
  for (const char* name : {"latest", "latest_checkpointed_iteration.txt"}) {
    UserDir dir(*user);
    std::filesystem::create_symlink(secret.file, dir.path + "/" + name);
    auto marker = ReadCheckpointMarker(dir.path, *user);
    REQUIRE_FALSE(marker.ok());
    CHECK_THAT(std::string(marker.status().message()),
               Catch::Contains("symbolic link"));
    CHECK_THAT(std::string(marker.status().message()),
               !Catch::Contains("TOPSECRET"));
  }
}

TEST_CASE("a marker in a directory the user cannot read is not read",
          "[checkpoint][privileges]") {
  std::optional<RankIdentity> user = NobodyIdentity();
  if (!user) GANTRY_SKIP("needs root and the nobody user");
  TempDir closed;  // root's, 0700
  ::chmod(closed.path.c_str(), 0700);
  closed.Write("latest", "global_step_TOPSECRET");
  auto marker = ReadCheckpointMarker(closed.path, *user);
  REQUIRE_FALSE(marker.ok());
  CHECK(marker.status().code() == absl::StatusCode::kPermissionDenied);
  CHECK_THAT(std::string(marker.status().message()),
             !Catch::Contains("TOPSECRET"));
  // The agent itself reads it: the user's credentials made the difference.
  auto as_root = ReadCheckpointMarker(closed.path, kAgentItself);
  REQUIRE(as_root.ok());
  CHECK((*as_root)->path == closed.path + "/global_step_TOPSECRET");
}

TEST_CASE("a FIFO planted as a marker is refused without blocking",
          "[checkpoint][privileges]") {
  TempDir dir;
  REQUIRE(::mkfifo((dir.path + "/latest").c_str(), 0666) == 0);
  const auto start = std::chrono::steady_clock::now();
  auto marker = ReadCheckpointMarker(dir.path, kAgentItself);
  REQUIRE_FALSE(marker.ok());
  CHECK_THAT(std::string(marker.status().message()),
             Catch::Contains("not a regular file"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
}

TEST_CASE("a device planted as a marker is refused",
          "[checkpoint][privileges]") {
  TempDir dir;
  std::filesystem::create_symlink("/dev/zero", dir.path + "/latest");
  auto marker = ReadCheckpointMarker(dir.path, kAgentItself);
  REQUIRE_FALSE(marker.ok());
  CHECK_THAT(std::string(marker.status().message()),
             Catch::Contains("symbolic link"));
}

TEST_CASE("a huge marker is refused unread", "[checkpoint][privileges]") {
  TempDir dir;
  dir.Write("latest", "global_step1\n" + std::string(1 << 20, 'x'));
  auto marker = ReadCheckpointMarker(dir.path, kAgentItself);
  REQUIRE_FALSE(marker.ok());
  CHECK_THAT(std::string(marker.status().message()),
             Catch::Contains("larger than the 4096 bytes allowed"));
}

TEST_CASE("the user's own marker is still read as the user",
          "[checkpoint][privileges]") {
  std::optional<RankIdentity> user = NobodyIdentity();
  if (!user) GANTRY_SKIP("needs root and the nobody user");
  UserDir dir(*user);
  dir.Write("latest_checkpointed_iteration.txt", "700\n");
  REQUIRE(::chown((dir.path + "/latest_checkpointed_iteration.txt").c_str(),
                  user->uid, user->gid) == 0);
  auto marker = ReadCheckpointMarker(dir.path, *user);
  REQUIRE(marker.ok());
  REQUIRE(marker->has_value());
  CHECK((*marker)->path == dir.path + "/iter_0000700");
  CHECK((*marker)->step == 700);
}

}  // namespace checkpoint_markers_test
}  // namespace gantry::agent
