// Who is an admin, who may manage a job, and how credentials are bound to
// requests. The MUNGE round trips themselves run against a real munged in
// tests/integration/test_authentication.py.
#include <catch2/catch.hpp>

#include "common/munge_credential.h"
#include "daemon/authenticator.h"
#include "daemon/caller.h"

namespace gantry {
namespace {

TEST_CASE("root is always an admin") {
  CHECK(IsAdmin(0, {}, std::nullopt));
  CHECK(IsAdmin(0, {100}, gid_t{4242}));
}

TEST_CASE("a user is an admin only through the configured admin group") {
  CHECK_FALSE(IsAdmin(1000, {1000, 27}, std::nullopt));
  CHECK_FALSE(IsAdmin(1000, {1000, 27}, gid_t{4242}));
  CHECK(IsAdmin(1000, {1000, 4242}, gid_t{4242}));
  // The primary group counts as well (it is in the list getgrouplist gives).
  CHECK(IsAdmin(1000, {4242}, gid_t{4242}));
}

TEST_CASE("owners and admins may manage a job, others may not") {
  Caller owner{.uid = 1000, .gid = 1000, .user = "alice", .admin = false};
  Caller other{.uid = 1001, .gid = 1001, .user = "bob", .admin = false};
  Caller admin{.uid = 1002, .gid = 1002, .user = "carol", .admin = true};
  CHECK(owner.MayManage(1000));
  CHECK_FALSE(other.MayManage(1000));
  CHECK(admin.MayManage(1000));
}

TEST_CASE("credentials are bound to the method they were made for") {
  CHECK(MungePayloadFor("Submit") == "gantry:Submit");
  CHECK(MungePayloadFor("Submit") != MungePayloadFor("Cancel"));
}

TEST_CASE("an admin group that does not exist is refused at start") {
  absl::StatusOr<Authenticator> authenticator =
      Authenticator::Create({.use_munge = false,
                             .munge_socket = "",
                             .admin_group = "no-such-group-anywhere"});
  REQUIRE_FALSE(authenticator.ok());
  CHECK(authenticator.status().message() ==
        "admin group \"no-such-group-anywhere\" does not exist on this host");
}

TEST_CASE("with authentication off, an existing group is accepted") {
  absl::StatusOr<Authenticator> authenticator = Authenticator::Create(
      {.use_munge = false, .munge_socket = "", .admin_group = "root"});
  REQUIRE(authenticator.ok());
  CHECK_FALSE(authenticator->uses_munge());
}

}  // namespace
}  // namespace gantry
