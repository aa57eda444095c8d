// Which standby `gantry handover STANDBY` (scontrol takeover INDEX) means.
#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "cli/commands/handover_command.h"

namespace gantry::cli {
namespace handover_command_test {

v1::ReplicationStatus ThreeControllers() {
  v1::ReplicationStatus replication;
  replication.set_enabled(true);
  replication.set_leader("ctl1");
  for (const char* name : {"ctl3", "ctl1", "ctl2"}) {
    v1::ControllerMember* member = replication.add_controllers();
    member->set_name(name);
    member->set_role(std::string(name) == "ctl1" ? "leader" : "standby");
  }
  return replication;
}

TEST_CASE("A standby is named, or counted from 1 in name order") {
  const v1::ReplicationStatus replication = ThreeControllers();
  CHECK(*ResolveStandby(replication, "") == "");
  CHECK(*ResolveStandby(replication, "ctl3") == "ctl3");
  CHECK(*ResolveStandby(replication, "1") == "ctl2");
  CHECK(*ResolveStandby(replication, "2") == "ctl3");
  // A name nobody has is the controller's to refuse (it lists whom it
  // knows).
  CHECK(*ResolveStandby(replication, "ctl9") == "ctl9");
}

TEST_CASE("A position past the standbys is refused, naming them") {
  const v1::ReplicationStatus replication = ThreeControllers();
  absl::StatusOr<std::string> third = ResolveStandby(replication, "3");
  REQUIRE(!third.ok());
  CHECK(third.status().code() == absl::StatusCode::kNotFound);
  CHECK(absl::StrContains(third.status().message(), "ctl2, ctl3"));
  CHECK(!ResolveStandby(replication, "0").ok());
}

TEST_CASE("A controller without replication gets the words as they are") {
  // It refuses any hand-over itself: it runs alone.
  CHECK(*ResolveStandby(v1::ReplicationStatus(), "1") == "1");
}

TEST_CASE("A controller named by digits is taken by its name") {
  v1::ReplicationStatus replication = ThreeControllers();
  replication.mutable_controllers(0)->set_name("7");
  CHECK(*ResolveStandby(replication, "7") == "7");
}

}  // namespace handover_command_test
}  // namespace gantry::cli
