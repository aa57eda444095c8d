// The job directory the agent hands to a job's user: files written into it
// never go through a name the user planted, and it is removed as the user.
#include "agent/launch/job_directory.h"
#include "agent/launch/job_directory_reclaimer.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/unit/support/nobody_identity.h"
#include "tests/unit/support/skip.h"
#include "tests/unit/support/temp_dir.h"

namespace gantry::agent {
namespace job_directory_test {

namespace fs = std::filesystem;

// The agent's work dir: others may pass through it (ranks exec their
// script in it as the job's user).
// Open to every user (0755): job directories are made inside it as the
// job's user.
struct TempDir : gantry::testing::TempDir {
  TempDir() : gantry::testing::TempDir("jobdir") {
    ::chmod(path.c_str(), 0755);
  }
};

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_CASE("the script is written into a new job directory for its user",
          "[job_directory][privileges]") {
  std::optional<RankIdentity> user = NobodyIdentity();
  if (!user) GANTRY_SKIP("needs root and the nobody user");
  TempDir work;
  const std::string job_dir = work.path + "/7.1";
  REQUIRE(WriteJobFile(job_dir, "script", "#!/bin/sh\ntrue\n", *user).ok());
  struct stat info {};
  REQUIRE(::stat((job_dir + "/script").c_str(), &info) == 0);
  CHECK(info.st_uid == user->uid);
  CHECK((info.st_mode & 07777) == 0700);
  REQUIRE(::stat(job_dir.c_str(), &info) == 0);
  CHECK(info.st_uid == user->uid);
  CHECK((info.st_mode & 07777) == 0700);
  CHECK(Read(job_dir + "/script") == "#!/bin/sh\ntrue\n");
}

TEST_CASE(
    "a link the user planted under a step's name is not written "
    "through",
    "[job_directory][privileges]") {
  std::optional<RankIdentity> user = NobodyIdentity();
  if (!user) GANTRY_SKIP("needs root and the nobody user");
  TempDir work;
  TempDir system;
  const std::string victim = system.path + "/victim";
  std::ofstream(victim) << "system file\n";
  ::chmod(victim.c_str(), 0644);
  const std::string job_dir = work.path + "/7.1";
  REQUIRE(WriteJobFile(job_dir, "script", "#!/bin/sh\n", *user).ok());
  // What the user's running script could do in its own directory.
  fs::create_symlink(victim, job_dir + "/step-1");
  REQUIRE(::link(victim.c_str(), (job_dir + "/step-2").c_str()) == 0);

  REQUIRE(WriteJobFile(job_dir, "step-1", "step one\n", *user).ok());
  REQUIRE(WriteJobFile(job_dir, "step-2", "step two\n", *user).ok());
  CHECK(Read(victim) == "system file\n");
  struct stat info {};
  REQUIRE(::stat(victim.c_str(), &info) == 0);
  CHECK(info.st_uid == 0);
  CHECK((info.st_mode & 07777) == 0644);
  REQUIRE(::lstat((job_dir + "/step-1").c_str(), &info) == 0);
  CHECK(S_ISREG(info.st_mode));
  CHECK(Read(job_dir + "/step-1") == "step one\n");
  CHECK(Read(job_dir + "/step-2") == "step two\n");
}

TEST_CASE("a job directory of someone else's is refused",
          "[job_directory][privileges]") {
  std::optional<RankIdentity> user = NobodyIdentity();
  if (!user) GANTRY_SKIP("needs root and the nobody user");
  TempDir work;
  const std::string job_dir = work.path + "/7.1";
  REQUIRE(::mkdir(job_dir.c_str(), 0755) == 0);
  REQUIRE(::chown(job_dir.c_str(), user->uid + 1, user->gid) == 0);
  absl::Status status = WriteJobFile(job_dir, "script", "x", *user);
  CHECK(status.code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(status.message()),
             Catch::Contains("neither the agent nor the job's user"));

  const std::string link_dir = work.path + "/8.1";
  fs::create_symlink(work.path, link_dir);
  CHECK(WriteJobFile(link_dir, "script", "x", *user).code() ==
        absl::StatusCode::kFailedPrecondition);
  CHECK(WriteJobFile(work.path, "../escape", "x", *user).code() ==
        absl::StatusCode::kInvalidArgument);
}

// WORK/7.1, the user's job directory, holding a link to a directory of
// root's files (SYSTEM, with SYSTEM/keep) that a removal must not follow.
struct JobDirectoryWithLink {
  TempDir work;
  TempDir system;
  std::string keep = system.path + "/keep";
  std::string job_dir = work.path + "/7.1";

  explicit JobDirectoryWithLink(const RankIdentity& user) {
    ::chmod(system.path.c_str(), 0777);
    std::ofstream(keep) << "keep\n";
    REQUIRE(WriteJobFile(job_dir, "script", "#!/bin/sh\n", user).ok());
    fs::create_symlink(system.path, job_dir + "/sub");
  }
};

TEST_CASE("a job directory is removed without following the user's links",
          "[job_directory][privileges]") {
  std::optional<RankIdentity> user = NobodyIdentity();
  if (!user) GANTRY_SKIP("needs root and the nobody user");
  JobDirectoryWithLink tree(*user);
  RemoveJobDirectory(tree.job_dir);
  CHECK_FALSE(fs::exists(fs::symlink_status(tree.job_dir)));
  CHECK(fs::exists(tree.keep));
}

TEST_CASE("a discarded job directory is set aside at once, removed later",
          "[job_directory][privileges]") {
  std::optional<RankIdentity> user = NobodyIdentity();
  if (!user) GANTRY_SKIP("needs root and the nobody user");
  JobDirectoryWithLink tree(*user);
  const std::string& job_dir = tree.job_dir;
  JobDirectoryReclaimer reclaimer;
  reclaimer.Discard(job_dir);
  // The name is free as Discard returns: a later step of the same attempt
  // makes the directory again, and the earlier clean-up leaves it alone.
  CHECK_FALSE(fs::exists(fs::symlink_status(job_dir)));
  REQUIRE(WriteJobFile(job_dir, "step", "#!/bin/sh\n", *user).ok());
  reclaimer.Drain();
  CHECK(Read(job_dir + "/step") == "#!/bin/sh\n");
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(tree.work.path)) {
    left.push_back(entry.path().filename().string());
  }
  CHECK(left == std::vector<std::string>{"7.1"});
  CHECK(fs::exists(tree.keep));  // the user's link was not followed
  // Again, with the same name: set aside under another name.
  reclaimer.Discard(job_dir);
  reclaimer.Discard(tree.work.path + "/8.1");  // gone already: nothing to do
  reclaimer.Drain();
  CHECK(fs::is_empty(tree.work.path));
}

}  // namespace job_directory_test
}  // namespace gantry::agent
