// Reading, appending to and removing files as a job's user: the parent's
// reading of the child's reply (pure), and real operations as the nobody user
// when the test runs as root.
#include "agent/launch/user_file_access.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "tests/unit/support/nobody_identity.h"
#include "tests/unit/support/skip.h"
#include "tests/unit/support/temp_dir.h"

namespace gantry::agent {
namespace user_file_access_test {

namespace fs = std::filesystem;
using std::chrono::seconds;

const RankIdentity kAgentItself{};

std::string Reply(UserFileOutcome outcome, int error = 0, int64_t size = 0,
                  const std::string& bytes = "") {
  UserFileReplyHeader header;
  header.outcome = static_cast<int32_t>(outcome);
  header.error = error;
  header.mtime_ns = 42;
  header.size = size;
  std::string reply(sizeof header, '\0');
  std::memcpy(reply.data(), &header, sizeof header);
  return reply + bytes;
}

using gantry::testing::TempDir;

TEST_CASE("a read reply carries the bytes and the time", "[user_file]") {
  auto file = InterpretReadReply(Reply(UserFileOutcome::kRead, 0, 5, "hello"),
                                 "/d/f", kAgentItself, 100);
  REQUIRE(file.ok());
  REQUIRE(file->has_value());
  CHECK((*file)->text == "hello");
  CHECK((*file)->mtime_ns == 42);

  auto absent =
      InterpretReadReply(Reply(UserFileOutcome::kAbsent), "/d/f", {}, 100);
  REQUIRE(absent.ok());
  CHECK_FALSE(absent->has_value());
}

TEST_CASE("a short or inconsistent read reply is an error", "[user_file]") {
  auto none = InterpretReadReply("", "/d/f", kAgentItself, 100);
  CHECK(none.status().code() == absl::StatusCode::kUnavailable);
  CHECK_THAT(std::string(none.status().message()),
             Catch::Contains("ended without an answer"));
  std::string half = Reply(UserFileOutcome::kRead, 0, 5, "hello");
  half.resize(half.size() - 2);
  CHECK_FALSE(InterpretReadReply(half, "/d/f", kAgentItself, 100).ok());
  // More than the caller allowed, even if the child says so.
  CHECK_FALSE(InterpretReadReply(Reply(UserFileOutcome::kRead, 0, 5, "hello"),
                                 "/d/f", kAgentItself, 4)
                  .ok());
}

TEST_CASE("each refusal says what and for whom", "[user_file]") {
  RankIdentity alice;
  alice.switch_user = true;
  alice.uid = 1234;
  alice.user = "alice";
  auto symlink =
      InterpretReadReply(Reply(UserFileOutcome::kSymlink), "/d/f", alice, 10);
  CHECK(symlink.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(symlink.status().message()),
             Catch::Contains("/d/f is a symbolic link") &&
                 Catch::Contains("user alice (uid 1234)"));
  auto denied = InterpretReadReply(Reply(UserFileOutcome::kFailed, EACCES),
                                   "/d/f", alice, 10);
  CHECK(denied.status().code() == absl::StatusCode::kPermissionDenied);
  auto big = InterpretReadReply(Reply(UserFileOutcome::kTooBig, 0, 99), "/d/f",
                                alice, 10);
  CHECK_THAT(std::string(big.status().message()),
             Catch::Contains("larger than the 10 bytes allowed"));
  auto odd = InterpretReadReply(Reply(UserFileOutcome::kNotRegular), "/d/f",
                                alice, 10);
  CHECK_THAT(std::string(odd.status().message()),
             Catch::Contains("not a regular file"));
  auto credentials = InterpretReadReply(
      Reply(UserFileOutcome::kCredentials, EPERM), "/d/f", alice, 10);
  CHECK(credentials.status().code() == absl::StatusCode::kUnavailable);
  CHECK_THAT(std::string(credentials.status().message()),
             Catch::Contains("cannot become user alice"));
}

TEST_CASE("a removal reply", "[user_file]") {
  CHECK(InterpretRemoveReply(Reply(UserFileOutcome::kRemoved), "/d", {}).ok());
  CHECK(InterpretRemoveReply(Reply(UserFileOutcome::kAbsent), "/d", {}).ok());
  CHECK(
      InterpretRemoveReply(Reply(UserFileOutcome::kTooDeep), "/d", {}).code() ==
      absl::StatusCode::kInvalidArgument);
  CHECK(InterpretRemoveReply("", "/d", {}).code() ==
        absl::StatusCode::kUnavailable);
}

TEST_CASE("an append reply", "[user_file]") {
  CHECK(
      InterpretAppendReply(Reply(UserFileOutcome::kAppended, 0, 5), "/f", {}, 5)
          .ok());
  CHECK(
      InterpretAppendReply(Reply(UserFileOutcome::kAppended, 0, 3), "/f", {}, 5)
          .code() == absl::StatusCode::kUnavailable);
  CHECK(InterpretAppendReply(Reply(UserFileOutcome::kAbsent), "/f", {}, 5)
            .code() == absl::StatusCode::kNotFound);
  CHECK(InterpretAppendReply(Reply(UserFileOutcome::kNotRegular), "/f", {}, 5)
            .code() == absl::StatusCode::kInvalidArgument);
  CHECK(
      InterpretAppendReply(Reply(UserFileOutcome::kFailed, EACCES), "/f", {}, 5)
          .code() == absl::StatusCode::kPermissionDenied);
  CHECK(InterpretAppendReply("", "/f", {}, 5).code() ==
        absl::StatusCode::kUnavailable);
}

TEST_CASE("an append goes at the end of the file and creates nothing",
          "[user_file]") {
  TempDir dir;
  const std::string file = dir.Write("out", "job output\n");
  REQUIRE(
      AppendToFileAsUser(kAgentItself, file, "the line\n", seconds(2)).ok());
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  CHECK(text == "job output\nthe line\n");
  CHECK(AppendToFileAsUser(kAgentItself, dir.path + "/none", "x", seconds(2))
            .code() == absl::StatusCode::kNotFound);
  CHECK_FALSE(fs::exists(dir.path + "/none"));
  CHECK(AppendToFileAsUser(kAgentItself, dir.path, "x", seconds(2)).code() !=
        absl::StatusCode::kOk);
}

TEST_CASE("an append through a planted link to root's file is refused",
          "[user_file][privileges]") {
  std::optional<RankIdentity> user = NobodyIdentity();
  if (!user) GANTRY_SKIP("needs root and the nobody user");
  TempDir dir;
  ::chmod(dir.path.c_str(), 0755);
  const std::string target = dir.Write("root-owned", "root's\n");
  ::chmod(target.c_str(), 0644);
  fs::create_symlink(target, dir.path + "/slurm-1.out");
  const absl::Status denied = AppendToFileAsUser(
      *user, dir.path + "/slurm-1.out", "planted\n", seconds(2));
  CHECK(denied.code() == absl::StatusCode::kPermissionDenied);
  CHECK_THAT(std::string(denied.message()), Catch::Contains("nobody"));
  std::ifstream in(target);
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  CHECK(text == "root's\n");
  // A link to a file the user may write is followed, as the job's open was.
  const std::string own = dir.Write("own", "");
  ::chown(own.c_str(), user->uid, user->gid);
  fs::create_symlink(own, dir.path + "/link-to-own");
  CHECK(AppendToFileAsUser(*user, dir.path + "/link-to-own", "ok\n", seconds(2))
            .ok());
  CHECK(fs::file_size(own) == 3);
}

TEST_CASE("a file is read as the user, with the user's permissions",
          "[user_file][privileges]") {
  std::optional<RankIdentity> user = NobodyIdentity();
  if (!user) GANTRY_SKIP("needs root and the nobody user");
  TempDir dir;
  ::chmod(dir.path.c_str(), 0755);
  const std::string open = dir.Write("open", "for all\n");
  ::chmod(open.c_str(), 0644);
  const std::string closed = dir.Write("closed", "root only\n");
  ::chmod(closed.c_str(), 0600);

  auto read = ReadSmallFileAsUser(*user, open, 100, seconds(2));
  REQUIRE(read.ok());
  REQUIRE(read->has_value());
  CHECK((*read)->text == "for all\n");

  auto denied = ReadSmallFileAsUser(*user, closed, 100, seconds(2));
  CHECK(denied.status().code() == absl::StatusCode::kPermissionDenied);
  CHECK_THAT(std::string(denied.status().message()),
             !Catch::Contains("root only"));
  // The same file as the agent itself: the credentials made the difference.
  auto as_agent = ReadSmallFileAsUser(kAgentItself, closed, 100, seconds(2));
  REQUIRE(as_agent.ok());
  CHECK((*as_agent)->text == "root only\n");

  auto missing =
      ReadSmallFileAsUser(*user, dir.path + "/nothing", 100, seconds(2));
  REQUIRE(missing.ok());
  CHECK_FALSE(missing->has_value());
}

TEST_CASE("a symbolic link is not followed, even to a readable file",
          "[user_file]") {
  TempDir dir;
  const std::string target = dir.Write("target", "text");
  fs::create_symlink(target, dir.path + "/link");
  auto read =
      ReadSmallFileAsUser(kAgentItself, dir.path + "/link", 100, seconds(2));
  CHECK_THAT(std::string(read.status().message()),
             Catch::Contains("symbolic link"));
}

TEST_CASE("the agent's threads keep their credentials",
          "[user_file][privileges]") {
  std::optional<RankIdentity> user = NobodyIdentity();
  if (!user) GANTRY_SKIP("needs root and the nobody user");
  TempDir dir;
  (void)ReadSmallFileAsUser(*user, dir.Write("f", "x"), 10, seconds(2));
  uid_t real = 1, effective = 1, saved = 1;
  REQUIRE(::getresuid(&real, &effective, &saved) == 0);
  CHECK(real == 0);
  CHECK(effective == 0);
  CHECK(saved == 0);
}

TEST_CASE("removal as the user stays inside what the user may delete",
          "[user_file][privileges]") {
  std::optional<RankIdentity> user = NobodyIdentity();
  if (!user) GANTRY_SKIP("needs root and the nobody user");
  // Root's files elsewhere, reachable through links in the user's tree.
  TempDir outside;
  ::chmod(outside.path.c_str(), 0777);
  const std::string precious = outside.Write("precious", "keep");

  TempDir tree;
  REQUIRE(::chown(tree.path.c_str(), user->uid, user->gid) == 0);
  fs::create_directories(tree.path + "/a/b/c");
  std::ofstream(tree.path + "/a/b/c/file") << "x";
  fs::create_symlink(outside.path, tree.path + "/a/dirlink");
  fs::create_symlink(precious, tree.path + "/filelink");
  for (const auto& entry : fs::recursive_directory_iterator(tree.path)) {
    ::lchown(entry.path().c_str(), user->uid, user->gid);
  }
  REQUIRE(RemoveDirectoryContentsAsUser(*user, tree.path, seconds(5)).ok());
  CHECK(fs::is_empty(tree.path));
  CHECK(fs::exists(precious));

  // A root-owned file in a root-owned subdirectory: the user may not.
  fs::create_directories(tree.path + "/rootdir");
  std::ofstream(tree.path + "/rootdir/file") << "x";
  absl::Status denied =
      RemoveDirectoryContentsAsUser(*user, tree.path, seconds(5));
  CHECK(denied.code() == absl::StatusCode::kPermissionDenied);
  CHECK(fs::exists(tree.path + "/rootdir/file"));
}

TEST_CASE("removal refuses a symbolic link and a tree too deep",
          "[user_file]") {
  TempDir dir;
  fs::create_symlink("/etc", dir.path + "/link");
  absl::Status link = RemoveDirectoryContentsAsUser(
      kAgentItself, dir.path + "/link", seconds(5));
  CHECK(link.code() == absl::StatusCode::kInvalidArgument);
  CHECK(fs::exists("/etc/passwd"));

  std::string deep = dir.path + "/deep";
  for (int level = 0; level <= kMaxRemoveDepth; ++level) deep += "/d";
  fs::create_directories(deep);
  absl::Status too_deep = RemoveDirectoryContentsAsUser(
      kAgentItself, dir.path + "/deep", seconds(5));
  CHECK(too_deep.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(too_deep.message()), Catch::Contains("levels deep"));
}

TEST_CASE("an operation that outlasts its timeout is ended and says so",
          "[user_file]") {
  // The child's own timer ends it; the caller's thread waits no longer.
  TempDir dir;
  fs::create_directories(dir.path + "/many");
  for (int i = 0; i < 5000; ++i) {
    std::ofstream(dir.path + "/many/f" + std::to_string(i)) << "x";
  }
  const auto started = std::chrono::steady_clock::now();
  absl::Status cut = RemoveDirectoryContentsAsUser(
      kAgentItself, dir.path + "/many", std::chrono::milliseconds(1));
  const auto took = std::chrono::steady_clock::now() - started;
  CHECK(cut.code() == absl::StatusCode::kDeadlineExceeded);
  CHECK_THAT(std::string(cut.message()), Catch::Contains("gave up after 1 ms"));
  CHECK_FALSE(fs::is_empty(dir.path + "/many"));
  CHECK(took < seconds(2));
  // With time enough, the same removal finishes.
  CHECK(RemoveDirectoryContentsAsUser(kAgentItself, dir.path + "/many",
                                      seconds(30))
            .ok());
  CHECK(fs::is_empty(dir.path + "/many"));
}

TEST_CASE("a read's bytes come back whole, larger than a pipe holds",
          "[user_file]") {
  TempDir dir;
  const std::string text(200 * 1024, 'q');
  const std::string path = dir.Write("big", text);
  auto read = ReadSmallFileAsUser(kAgentItself, path, text.size(), seconds(5));
  INFO(read.status().ToString());
  REQUIRE(read.ok());
  REQUIRE(read->has_value());
  CHECK((*read)->text == text);
}

}  // namespace user_file_access_test
}  // namespace gantry::agent
