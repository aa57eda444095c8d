// The fault-survivor feature (daemon/controller/features/fault_survivors/)
// through its hooks over a fake context: which of a failed attempt's other
// nodes its restart may use and when, the probe once the fault settled, a
// range job held before it is sized, and a silent survivor found dead. The
// whole path with a controller is controller_component_test's "survivors"
// cases; with real agents, integration.node_failure.
#include "daemon/controller/features/fault_survivors/fault_survivor_feature.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/unit/daemon/controller/features/fake_feature_context.h"

namespace gantry {
namespace fault_survivor_feature_test {

constexpr uint64_t kJob = 4;
constexpr int64_t kStart = 1'000'000;
constexpr int64_t kSettle = 1'000;
constexpr int64_t kBeat = 500;

// Job 4's attempt ran on n1-n3 since kStart; all three heard from then.
struct Cluster {
  Cluster() : context(kStart), feature(context, {kSettle, kBeat}) {
    job.set_id(kJob);
    v1::AttemptRecord& attempt = *job.add_attempts();
    attempt.set_start_time_ms(kStart);
    for (const char* name : {"n1", "n2", "n3"}) {
      v1::NodeRecord node;
      node.set_name(name);
      node.set_state(v1::NODE_UP);
      node.set_last_seen_ms(kStart);
      context.nodes[name] = node;
      attempt.add_nodes(name);
    }
  }
  // n1 found down 10 s in, having last beaten at 9 s: the attempt failed
  // for it and restarts.
  void LoseN1() {
    context.fake_clock.SetMs(kStart + 10'000);
    context.nodes["n1"].set_state(v1::NODE_DOWN);
    context.nodes["n1"].set_last_seen_ms(kStart + 9'000);
    feature.OnAttemptFailed(job, /*node_fault_restart=*/true);
  }
  std::vector<std::string> Excluded(bool sized_by_range = false) {
    std::vector<std::string> excluded;
    PlacementLimits limits;
    limits.excluded = &excluded;
    feature.LimitPlacement(job, sized_by_range, limits);
    held = limits.held;
    detail = limits.detail;
    return excluded;
  }
  void Hear(const std::string& node) {
    context.nodes[node].set_last_seen_ms(context.fake_clock.NowMs());
    feature.OnHeardFrom(node);
  }

  FakeFeatureContext context;
  FaultSurvivorFeature feature;
  v1::JobRecord job;
  bool held = false;
  std::string detail;
};

TEST_CASE(
    "a node fault keeps its survivors from the restart until heard "
    "from once it settled") {
  Cluster c;
  c.LoseN1();
  // The fault counts from n1's missed beat (9.5 s), so it settles at 10.5 s.
  CHECK(c.Excluded() == std::vector<std::string>{"n2", "n3"});
  REQUIRE(c.context.wakes.size() == 1);
  CHECK(c.context.wakes[0] == 501);
  // Heard from before it settled: a node failing a moment after the first
  // is still possible.
  c.Hear("n2");
  CHECK(c.Excluded() == std::vector<std::string>{"n2", "n3"});
  CHECK(c.context.schedules_requested == 0);
  // Once it settled: n2 may serve the restart, and a pass is asked for.
  c.context.fake_clock.SetMs(kStart + 10'600);
  c.Hear("n2");
  CHECK(c.Excluded() == std::vector<std::string>{"n3"});
  CHECK(c.context.schedules_requested == 1);
  CHECK_FALSE(c.held);
}

TEST_CASE("survivors still silent when the fault settled are probed once") {
  Cluster c;
  c.LoseN1();
  c.feature.OnWake();  // early: nothing settled yet
  CHECK(c.context.sent.empty());
  c.context.fake_clock.SetMs(kStart + 10'600);
  c.feature.OnWake();
  REQUIRE(c.context.sent.size() == 2);
  CHECK(c.context.sent[0].first == "n2");
  CHECK(c.context.sent[0].second.has_probe());
  CHECK(c.context.sent[1].first == "n3");
  c.feature.OnWake();  // asked already
  CHECK(c.context.sent.size() == 2);
}

TEST_CASE(
    "a job with a node range waits to hear from its survivors before "
    "it is sized") {
  Cluster c;
  c.LoseN1();
  c.Excluded(/*sized_by_range=*/true);
  CHECK(c.held);
  CHECK(c.detail == "waiting to hear from n2 before choosing the job's size");
  // Any message after the fault will do for sizing (the ranks' exits).
  c.Hear("n2");
  c.Hear("n3");
  c.Excluded(/*sized_by_range=*/true);
  CHECK_FALSE(c.held);
}

TEST_CASE(
    "a silent survivor found dead failed under the job, the others did not") {
  Cluster c;
  c.LoseN1();
  CHECK(c.feature.OnNodeDown("n3", true));
  CHECK_FALSE(c.feature.OnNodeDown("n3", true));  // told once
  CHECK_FALSE(c.feature.OnNodeDown("n9", true));
}

TEST_CASE("other failures, and finished jobs, leave no survivors behind") {
  Cluster c;
  c.feature.OnAttemptFailed(c.job, /*node_fault_restart=*/false);
  CHECK(c.Excluded().empty());
  CHECK(c.context.wakes.empty());
  c.LoseN1();
  c.feature.OnJobFinished(c.job);
  CHECK(c.Excluded().empty());
}

}  // namespace fault_survivor_feature_test
}  // namespace gantry
