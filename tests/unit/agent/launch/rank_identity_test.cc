// Who a rank runs as, and the environment it gets, from a fake user
// database: unknown users, disagreeing databases and foreign groups are
// refused with messages fit for the job's reason.
#include "agent/launch/rank_identity.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>

#include "agent/launch/sanitized_environment.h"
#include "tests/unit/support/fake_user_database.h"

namespace gantry::agent {
namespace rank_identity_test {

FakeUsers Alice() {
  FakeUsers users;
  users.users[1234] = {"alice", 1234, 1234, "/home/alice", "/bin/zsh"};
  users.groups["alice"] = {27, 100};
  return users;
}

IdentityRequest RequestFor(uint32_t uid, uint32_t gid, std::string user) {
  IdentityRequest request;
  request.uid = uid;
  request.gid = gid;
  request.user = std::move(user);
  request.node = "node01";
  return request;
}

TEST_CASE("a known user's identity", "[identity]") {
  FakeUsers users = Alice();
  absl::StatusOr<RankIdentity> identity =
      ResolveRankIdentity(RequestFor(1234, 1234, "alice"), users);
  REQUIRE(identity.ok());
  CHECK(identity->switch_user);
  CHECK(identity->uid == 1234);
  CHECK(identity->gid == 1234);
  CHECK(identity->groups == std::vector<gid_t>{1234, 27, 100});
  CHECK(identity->user == "alice");
  CHECK(identity->home == "/home/alice");
  CHECK(identity->shell == "/bin/zsh");

  SECTION("a supplementary group as the current group (newgrp)") {
    absl::StatusOr<RankIdentity> other =
        ResolveRankIdentity(RequestFor(1234, 100, "alice"), users);
    REQUIRE(other.ok());
    CHECK(other->gid == 100);
  }
  SECTION("a name the submit host could not give is not compared") {
    CHECK(ResolveRankIdentity(RequestFor(1234, 1234, "1234"), users).ok());
    CHECK(ResolveRankIdentity(RequestFor(1234, 1234, ""), users).ok());
  }
}

TEST_CASE("identities that are refused", "[identity]") {
  FakeUsers users = Alice();
  struct Row {
    IdentityRequest request;
    const char* message;
  };
  const Row rows[] = {
      {RequestFor(4321, 4321, "bob"),
       "user bob (uid 4321) does not exist on node node01"},
      {RequestFor(4321, 4321, ""), "uid 4321 does not exist on node node01"},
      {RequestFor(1234, 1234, "mallory"),
       "uid 1234 is user alice on node node01, not mallory: the user "
       "databases of the submit host and the node disagree"},
      {RequestFor(1234, 0, "alice"),
       "gid 0 is not a group of user alice (uid 1234) on node node01"},
  };
  for (const Row& row : rows) {
    absl::StatusOr<RankIdentity> identity =
        ResolveRankIdentity(row.request, users);
    REQUIRE_FALSE(identity.ok());
    CHECK(identity.status().code() == absl::StatusCode::kFailedPrecondition);
    CHECK(std::string(identity.status().message()) == row.message);
  }
}

TEST_CASE("an agent that is not root runs ranks as itself", "[identity]") {
  FakeUsers users = Alice();
  users.users[1000] = {"dev", 1000, 1000, "/home/dev", "/bin/bash"};
  IdentityRequest request = RequestFor(4321, 4321, "bob");  // unknown here
  request.agent_is_root = false;
  request.agent_uid = 1000;
  absl::StatusOr<RankIdentity> identity = ResolveRankIdentity(request, users);
  REQUIRE(identity.ok());
  CHECK_FALSE(identity->switch_user);
  CHECK(identity->uid == 1000);
  CHECK(identity->home == "/home/dev");
}

TEST_CASE("a rank's environment is the job's, with the user's identity",
          "[identity]") {
  RankIdentity alice;
  alice.user = "alice";
  alice.home = "/home/alice";
  alice.shell = "/bin/zsh";
  // Submitted through sudo from root's shell.
  const std::map<std::string, std::string> job = {
      {"HOME", "/root"},
      {"USER", "root"},
      {"LOGNAME", "root"},
      {"SHELL", "/bin/bash"},
      {"PATH", "/opt/bin:/usr/bin"},
      {"LD_LIBRARY_PATH", "/opt/lib"},
      {"RANK", "submitter's"}};
  const std::map<std::string, std::string> rank = {{"RANK", "3"},
                                                   {"GANTRY_JOB_ID", "12"}};
  // HOME as the submitter exported it (Slurm's --export=ALL); the rank runs
  // as alice, so it reaches only her own processes.
  CHECK(SanitizedRankEnvironment(job, rank, alice) ==
        std::vector<std::string>{"GANTRY_JOB_ID=12", "HOME=/root",
                                 "LD_LIBRARY_PATH=/opt/lib", "LOGNAME=alice",
                                 "PATH=/opt/bin:/usr/bin", "RANK=3",
                                 "SHELL=/bin/zsh", "USER=alice"});

  SECTION("a job that exports no HOME (--export=NONE) gets the user's") {
    std::map<std::string, std::string> without_home = job;
    without_home.erase("HOME");
    const std::vector<std::string> environment =
        SanitizedRankEnvironment(without_home, rank, alice);
    CHECK(std::count(environment.begin(), environment.end(),
                     "HOME=/home/alice") == 1);
  }
  SECTION("a job with no PATH gets the system's") {
    CHECK(SanitizedRankEnvironment({}, {}, alice) ==
          std::vector<std::string>{"HOME=/home/alice", "LOGNAME=alice",
                                   "PATH=/usr/local/bin:/usr/bin:/bin",
                                   "SHELL=/bin/zsh", "USER=alice"});
  }
  SECTION("unknown identity fields keep the job's") {
    CHECK(SanitizedRankEnvironment({{"HOME", "/x"}, {"PATH", "/bin"}}, {},
                                   RankIdentity{}) ==
          std::vector<std::string>{"HOME=/x", "PATH=/bin"});
  }
}

}  // namespace rank_identity_test
}  // namespace gantry::agent
