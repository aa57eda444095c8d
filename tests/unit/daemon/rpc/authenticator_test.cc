// Who is an admin, who may manage a job, and how credentials are bound to
// requests (the digest of the exact request, and the refusal messages).
// The MUNGE round trips themselves run against a real munged in
// tests/integration/test_authentication.py.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "common/munge_credential.h"
#include "common/request_binding.h"
#include "daemon/controller/core/caller.h"
#include "daemon/rpc/authenticator.h"
#include "gantry/v1/client.pb.h"

namespace gantry {
namespace authenticator_test {

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

TEST_CASE("an agent's stream credential is bound to its method") {
  CHECK(MungePayloadFor("Connect") == "gantry:Connect");
}

v1::CancelRequest CancelOf(std::vector<uint64_t> jobs) {
  v1::CancelRequest request;
  for (uint64_t job : jobs) request.add_job_ids(job);
  return request;
}

TEST_CASE("a request's digest covers its method and its exact body") {
  const std::string digest = RequestDigest("Cancel", CancelOf({7}));
  CHECK(digest.size() == 64);  // SHA-256, hex
  CHECK(digest == RequestDigest("Cancel", CancelOf({7})));
  CHECK(digest != RequestDigest("Cancel", CancelOf({8})));
  CHECK(digest != RequestDigest("Cancel", CancelOf({7, 8})));
  CHECK(digest != RequestDigest("Hold", CancelOf({7})));
  // The method and the body are separated: "Cancel" + body cannot pose as
  // "Cance" + "l" + body.
  CHECK(RequestDigest("ab", v1::CancelRequest()) !=
        RequestDigest("a", v1::CancelRequest()));
  CHECK(MungePayloadForRequest("Cancel", CancelOf({7})) ==
        "gantry:Cancel:" + digest);
}

TEST_CASE("a digest does not depend on the order a map was filled in") {
  v1::SubmitRequest forward;
  (*forward.mutable_spec()->mutable_environment())["A"] = "1";
  (*forward.mutable_spec()->mutable_environment())["B"] = "2";
  v1::SubmitRequest backward;
  (*backward.mutable_spec()->mutable_environment())["B"] = "2";
  (*backward.mutable_spec()->mutable_environment())["A"] = "1";
  CHECK(RequestDigest("Submit", forward) == RequestDigest("Submit", backward));
  // Parsed again (as gantryd receives it), the digest is the same.
  v1::SubmitRequest received;
  REQUIRE(received.ParseFromString(forward.SerializeAsString()));
  CHECK(RequestDigest("Submit", received) == RequestDigest("Submit", forward));
}

TEST_CASE("a credential's payload is checked against the request received") {
  const v1::CancelRequest mine = CancelOf({7});
  CHECK(PayloadMismatch(MungePayloadForRequest("Cancel", mine), "Cancel", mine)
            .empty());
  // Made for another body of the same method: another user's Cancel.
  CHECK(PayloadMismatch(MungePayloadForRequest("Cancel", CancelOf({8})),
                        "Cancel", mine) ==
        "the MUNGE credential was made for a different Cancel request: its "
        "digest does not match this request's body (a credential vouches "
        "only for the exact request it was made for)");
  CHECK(PayloadMismatch(MungePayloadForRequest("Hold", mine), "Cancel", mine) ==
        "the MUNGE credential was made for another request (Hold), not for "
        "this Cancel");
  // Bound to the method alone, as clients made them before.
  CHECK(PayloadMismatch("gantry:Cancel", "Cancel", mine)
            .starts_with("the MUNGE credential is not bound to a request "
                         "(payload \"gantry:Cancel\")"));
  CHECK_FALSE(PayloadMismatch("", "Cancel", mine).empty());
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

}  // namespace authenticator_test
}  // namespace gantry
