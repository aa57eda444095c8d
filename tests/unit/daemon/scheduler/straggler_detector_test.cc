// Table tests of the straggler rules (daemon/scheduler/straggler_detector.h).
#include "daemon/scheduler/straggler_detector.h"

#include <catch2/catch.hpp>

namespace gantry {
namespace straggler_detector_test {

StragglerPolicy Policy() {
  StragglerPolicy policy;
  policy.slow_factor = 1.5;
  policy.min_duration_ms = 10'000;
  policy.min_peers = 2;
  policy.stale_ms = 5'000;
  return policy;
}

// Step times of n1..nN, all reported at `time_ms`.
std::vector<NodeStepTime> Nodes(std::vector<double> seconds,
                                int64_t time_ms = 0) {
  std::vector<NodeStepTime> nodes;
  for (size_t i = 0; i < seconds.size(); ++i) {
    nodes.push_back({"n" + std::to_string(i + 1), seconds[i], time_ms});
  }
  return nodes;
}

TEST_CASE("who is slow, at one look", "[straggler]") {
  struct Case {
    const char* name;
    std::vector<double> seconds;
    std::vector<std::string> slow;  // slowest first
  };
  const Case cases[] = {
      {"all alike", {1.0, 1.0, 1.0, 1.0}, {}},
      {"within the factor", {1.0, 1.0, 1.0, 1.45}, {}},
      {"at the factor", {1.0, 1.0, 1.0, 1.5}, {"n4"}},
      {"well above", {1.0, 1.1, 0.9, 2.1}, {"n4"}},
      {"two slow of five", {1.0, 3.0, 1.0, 2.0, 1.0}, {"n2", "n4"}},
      // Its own figure is not its peer: with three nodes the slow one is
      // judged against the other two.
      {"three nodes", {1.0, 1.0, 2.0}, {"n3"}},
      {"too few peers", {1.0, 5.0}, {}},
      {"unknown step times do not count as peers", {0.0, 1.0, 5.0}, {}},
      {"faster than the peers is fine", {0.2, 1.0, 1.0, 1.0}, {}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    std::map<std::string, int64_t> slow_since;
    std::vector<StragglerFinding> found =
        DetectStragglers(Nodes(c.seconds), 0, Policy(), slow_since);
    std::vector<std::string> names;
    for (const StragglerFinding& f : found) {
      names.push_back(f.node);
      CHECK_FALSE(f.confirmed);  // none has been slow for long yet
    }
    CHECK(names == c.slow);
    CHECK(slow_since.size() == c.slow.size());
  }
}

TEST_CASE("a straggler is slow for long enough, without a break",
          "[straggler]") {
  const StragglerPolicy policy = Policy();
  std::map<std::string, int64_t> slow_since;
  // Slow from t=0; confirmed only at min_duration_ms.
  for (int64_t t : {0, 4'000, 9'999}) {
    auto found =
        DetectStragglers(Nodes({1, 1, 1, 2.1}, t), t, policy, slow_since);
    REQUIRE(found.size() == 1);
    CHECK_FALSE(found[0].confirmed);
    CHECK(found[0].slow_since_ms == 0);
  }
  auto found = DetectStragglers(Nodes({1, 1, 1, 2.1}, 10'000), 10'000, policy,
                                slow_since);
  REQUIRE(found.size() == 1);
  CHECK(found[0].confirmed);
  CHECK(found[0].slowdown == Approx(2.1));
  CHECK(found[0].peer_median_seconds == Approx(1.0));
  // Back to normal: the run of slowness ends, and starts afresh after.
  CHECK(
      DetectStragglers(Nodes({1, 1, 1, 1}, 11'000), 11'000, policy, slow_since)
          .empty());
  CHECK(slow_since.empty());
  found =
      DetectStragglers(Nodes({1, 1, 1, 2}, 12'000), 12'000, policy, slow_since);
  REQUIRE(found.size() == 1);
  CHECK(found[0].slow_since_ms == 12'000);
  CHECK_FALSE(found[0].confirmed);
}

TEST_CASE("one slow step is noise, not a straggler", "[straggler]") {
  const StragglerPolicy policy = Policy();
  std::map<std::string, int64_t> slow_since;
  // One node takes 4x for one report every 3 s, normal in between.
  for (int64_t t = 0; t <= 30'000; t += 1'000) {
    const double mine = t % 3'000 == 0 ? 4.0 : 1.0;
    for (const StragglerFinding& f :
         DetectStragglers(Nodes({1, 1, 1, mine}, t), t, policy, slow_since)) {
      CHECK_FALSE(f.confirmed);
    }
  }
}

TEST_CASE("a slow node hovering at the threshold stays slow", "[straggler]") {
  // Once slow, it recovers only below the midpoint (1.25x here): readings
  // of 1.4x between 1.6x ones do not reset its clock.
  const StragglerPolicy policy = Policy();
  std::map<std::string, int64_t> slow_since;
  StragglerFinding last;
  for (int64_t t = 0; t <= 10'000; t += 1'000) {
    const double mine = (t / 1'000) % 2 == 0 ? 1.6 : 1.4;
    auto found =
        DetectStragglers(Nodes({1, 1, 1, mine}, t), t, policy, slow_since);
    REQUIRE(found.size() == 1);
    last = found[0];
  }
  CHECK(last.slow_since_ms == 0);
  CHECK(last.confirmed);
  // 1.2x is below the midpoint: recovered.
  CHECK(DetectStragglers(Nodes({1, 1, 1, 1.2}, 11'000), 11'000, policy,
                         slow_since)
            .empty());
}

TEST_CASE("stale reports neither judge nor are judged", "[straggler]") {
  const StragglerPolicy policy = Policy();
  std::map<std::string, int64_t> slow_since;
  std::vector<NodeStepTime> nodes = Nodes({1, 1, 1, 3}, 10'000);
  nodes[0].time_ms = 0;  // n1 silent for 10 s: two peers left for n4
  CHECK(DetectStragglers(nodes, 10'000, policy, slow_since).size() == 1);
  nodes[1].time_ms = 0;  // and n2: too few
  CHECK(DetectStragglers(nodes, 10'000, policy, slow_since).empty());
  CHECK(slow_since.empty());
}

TEST_CASE("a node that stops advancing looks slower and slower",
          "[straggler]") {
  // 1 s steps, last advance (of 1 step) at t=10 s, 2 s of slack.
  CHECK(EffectiveStepSeconds(1.0, 10'000, 1, 10'500, 2'000) == 1.0);
  CHECK(EffectiveStepSeconds(1.0, 10'000, 1, 12'500, 2'000) == 1.0);
  CHECK(EffectiveStepSeconds(1.0, 10'000, 1, 15'000, 2'000) == Approx(3.0));
  // Reports every 100 steps: the stall is spread over the steps it held.
  CHECK(EffectiveStepSeconds(0.5, 10'000, 100, 62'000, 2'000) == Approx(0.5));
  CHECK(EffectiveStepSeconds(0.5, 10'000, 100, 112'000, 2'000) == Approx(1.0));
  CHECK(EffectiveStepSeconds(0.0, 10'000, 1, 50'000, 2'000) == 0.0);
}

TEST_CASE("policy names", "[straggler]") {
  for (StragglerResponse r :
       {StragglerResponse::kOff, StragglerResponse::kReport,
        StragglerResponse::kSwap}) {
    auto parsed = ParseStragglerResponse(StragglerResponseName(r));
    REQUIRE(parsed.ok());
    CHECK(*parsed == r);
  }
  auto bad = ParseStragglerResponse("evict");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(bad.status().message()),
             Catch::Contains("off, report or swap"));
}

}  // namespace straggler_detector_test
}  // namespace gantry
