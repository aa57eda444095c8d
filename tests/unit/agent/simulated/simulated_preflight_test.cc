// Simulated pre-flight checks (agent/simulated/simulated_preflight.h): the
// plan's syntax, and the answers a ring of simulated nodes gives under it.
#include "agent/simulated/simulated_preflight.h"

#include <catch2/catch.hpp>

namespace gantry::agent {
namespace simulated_preflight_test {

v1::PreflightCheck Ring(int n, uint32_t index) {
  v1::PreflightCheck check;
  check.set_job_id(7);
  check.set_attempt(2);
  check.set_index(index);
  for (int i = 1; i <= n; ++i) {
    check.add_peers()->set_node("s" + std::to_string(i));
  }
  return check;
}

TEST_CASE("a simulated pre-flight plan parses and refuses what it is not") {
  absl::StatusOr<SimulatedPreflightPlan> plan = ParseSimulatedPreflightPlan(
      "# comment\n\ns1 fail GPU 2 missing\ns2 slow\n  s3 silent  \n");
  REQUIRE(plan.ok());
  REQUIRE(plan->size() == 3);
  CHECK(plan->at("s1").why == "GPU 2 missing");
  CHECK(plan->at("s2").kind == SimulatedPreflightBehavior::Kind::kSlow);
  CHECK(plan->at("s3").kind == SimulatedPreflightBehavior::Kind::kSilent);
  absl::StatusOr<SimulatedPreflightPlan> bad =
      ParseSimulatedPreflightPlan("s1 fail\ns2 sluggish\n");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(std::string(bad.status().message()), Catch::Contains("line 2"));
}

TEST_CASE("simulated nodes answer as their plan says") {
  SimulatedPreflightPlan plan =
      *ParseSimulatedPreflightPlan("s2 fail NVLink down\ns4 slow\ns6 silent\n");
  // A healthy node between healthy neighbours.
  std::optional<v1::PreflightResult> healthy =
      SimulatePreflight(Ring(8, 7), "s8", plan, 150);
  REQUIRE(healthy);
  CHECK(healthy->passed());
  CHECK(healthy->job_id() == 7);
  CHECK(healthy->attempt() == 2);
  CHECK(healthy->elapsed_ms() == 150);
  CHECK(healthy->send_mbps() == kSimulatedLinkMbps);
  CHECK(healthy->receive_mbps() == kSimulatedLinkMbps);
  // The failing node fails its own check.
  std::optional<v1::PreflightResult> failing =
      SimulatePreflight(Ring(8, 1), "s2", plan, 150);
  REQUIRE(failing);
  CHECK_FALSE(failing->passed());
  CHECK(failing->problem() == "NVLink down");
  // The slow node's links are slow at both ends.
  CHECK(SimulatePreflight(Ring(8, 3), "s4", plan, 1)->send_mbps() ==
        kSimulatedLinkMbps / 10);
  CHECK(SimulatePreflight(Ring(8, 2), "s3", plan, 1)->send_mbps() ==
        kSimulatedLinkMbps / 10);
  CHECK(SimulatePreflight(Ring(8, 4), "s5", plan, 1)->receive_mbps() ==
        kSimulatedLinkMbps / 10);
  // The silent one says nothing; its neighbours see their links fail.
  CHECK_FALSE(SimulatePreflight(Ring(8, 5), "s6", plan, 1));
  CHECK_FALSE(
      SimulatePreflight(Ring(8, 4), "s5", plan, 1)->send_problem().empty());
  CHECK_FALSE(
      SimulatePreflight(Ring(8, 6), "s7", plan, 1)->receive_problem().empty());
}

}  // namespace simulated_preflight_test
}  // namespace gantry::agent
