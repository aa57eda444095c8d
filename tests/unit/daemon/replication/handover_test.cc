// Which standby a leader hands over to (daemon/replication/handover.h).
#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "daemon/replication/handover.h"

namespace gantry::replication {
namespace handover_test {

v1::ControllerMember Member(const std::string& name, const std::string& role,
                            uint64_t applied) {
  v1::ControllerMember member;
  member.set_name(name);
  member.set_role(role);
  member.set_address(name + ":6817");
  member.set_applied_index(applied);
  return member;
}

TEST_CASE("The caught-up standby furthest along is chosen") {
  const std::vector<v1::ControllerMember> members = {
      Member("ctl1", "leader", 1000), Member("ctl2", "standby", 990),
      Member("ctl3", "standby", 999)};
  absl::StatusOr<v1::ControllerMember> chosen =
      ChooseSuccessor(members, "ctl1", 1000, "", 256);
  REQUIRE(chosen.ok());
  CHECK(chosen->name() == "ctl3");
  // Ties go by name.
  absl::StatusOr<v1::ControllerMember> tie = ChooseSuccessor(
      {Member("b", "standby", 5), Member("a", "standby", 5)}, "ctl1", 5, "");
  REQUIRE(tie.ok());
  CHECK(tie->name() == "a");
}

TEST_CASE("A named standby is chosen if caught up") {
  const std::vector<v1::ControllerMember> members = {
      Member("ctl1", "leader", 1000), Member("ctl2", "standby", 990),
      Member("ctl3", "standby", 999)};
  absl::StatusOr<v1::ControllerMember> chosen =
      ChooseSuccessor(members, "ctl1", 1000, "ctl2", 256);
  REQUIRE(chosen.ok());
  CHECK(chosen->name() == "ctl2");
  absl::StatusOr<v1::ControllerMember> behind =
      ChooseSuccessor(members, "ctl1", 1000, "ctl2", 5);
  REQUIRE(!behind.ok());
  CHECK(behind.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(absl::StrContains(behind.status().message(),
                          "ctl2 is 10 log entries behind"));
}

TEST_CASE("Hand-overs that cannot be are refused with why") {
  const std::vector<v1::ControllerMember> alone = {
      Member("ctl1", "leader", 10)};
  absl::StatusOr<v1::ControllerMember> none =
      ChooseSuccessor(alone, "ctl1", 10, "");
  REQUIRE(!none.ok());
  CHECK(none.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(absl::StrContains(none.status().message(), "no standby"));

  absl::StatusOr<v1::ControllerMember> unknown =
      ChooseSuccessor(alone, "ctl1", 10, "ctl9");
  REQUIRE(!unknown.ok());
  CHECK(unknown.status().code() == absl::StatusCode::kNotFound);
  CHECK(absl::StrContains(unknown.status().message(), "ctl1"));

  absl::StatusOr<v1::ControllerMember> self =
      ChooseSuccessor(alone, "ctl1", 10, "ctl1");
  REQUIRE(!self.ok());
  CHECK(self.status().code() == absl::StatusCode::kInvalidArgument);

  const std::vector<v1::ControllerMember> lagging = {
      Member("ctl1", "leader", 5000), Member("ctl2", "standby", 100)};
  absl::StatusOr<v1::ControllerMember> behind =
      ChooseSuccessor(lagging, "ctl1", 5000, "", 256);
  REQUIRE(!behind.ok());
  CHECK(absl::StrContains(behind.status().message(), "caught up"));
  CHECK(absl::StrContains(behind.status().message(), "4900"));
}

TEST_CASE("A member record without an address is no successor") {
  v1::ControllerMember nowhere = Member("ctl2", "standby", 10);
  nowhere.clear_address();
  CHECK(
      !ChooseSuccessor({Member("ctl1", "leader", 10), nowhere}, "ctl1", 10, "")
           .ok());
}

}  // namespace handover_test
}  // namespace gantry::replication
