// The checkpoint interval feature (daemon/controller/features/
// checkpoint_interval/) over a fake context: an attempt gets the Young/Daly
// interval for its node count at the failure rate seen (nodes lost while
// up, over the node-hours counted from the ticks) blended with the site's
// prior, with the cost its reports measured; none when the site gives no
// MTBF. The formula's own table is checkpoint_interval_test's; with a real
// gantryd, integration.checkpoint_interval.
#include "daemon/controller/features/checkpoint_interval/checkpoint_interval_feature.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "tests/unit/daemon/controller/features/fake_feature_context.h"

namespace gantry {
namespace checkpoint_interval_feature_test {

constexpr uint64_t kJob = 9;

struct Cluster {
  explicit Cluster(CheckpointIntervalSettings settings = {})
      : context(1'000'000), feature(context, settings) {
    for (const char* name : {"n1", "n2", "n3"}) {
      context.nodes[name].set_name(name);
      context.nodes[name].set_state(v1::NODE_UP);
    }
  }
  // Job 9's attempt starts on `nodes` nodes.
  const v1::JobRecord& Start(int nodes, double measured_cost = 0) {
    v1::JobRecord& job = context.jobs[kJob];
    job.set_id(kJob);
    job.set_state(v1::RUNNING);
    job.clear_allocation();
    for (int i = 0; i < nodes; ++i) job.add_allocation();
    job.set_checkpoint_cost_seconds(measured_cost);
    feature.OnJobStarted(job);
    return job;
  }
  // `seconds` of ticks, four a second.
  void Tick(int seconds) {
    for (int i = 0; i < 4 * seconds; ++i) {
      context.fake_clock.AdvanceMs(250);
      feature.OnTick(++ticks);
    }
  }

  FakeFeatureContext context;
  CheckpointIntervalFeature feature;
  uint64_t ticks = 0;
};

TEST_CASE("a fresh controller's interval comes from the site's prior") {
  Cluster c;
  const v1::JobRecord& job = c.Start(4);
  const double expected =
      std::round(*OptimalCheckpointIntervalSeconds(30, 6329.0 * 3600 / 4));
  CHECK(job.checkpoint_interval_seconds() == expected);
  CHECK(job.checkpoint_interval_basis().find("assumed, --checkpoint-cost") !=
        std::string::npos);
  CHECK(job.checkpoint_interval_basis().find("0 failures in 0 node-hours") !=
        std::string::npos);
}

TEST_CASE("node-hours count the nodes not down, once a second") {
  Cluster c;
  c.context.nodes["n3"].set_state(v1::NODE_DOWN);
  c.feature.OnStateLoaded(nullptr);  // counted from the start
  c.Tick(3600);
  // Two nodes up for an hour.
  CHECK(c.feature.failure_rate().observed_node_hours ==
        Approx(2.0).epsilon(0.001));
}

TEST_CASE("a node lost while up is a failure, and shortens the interval") {
  Cluster c;
  const double before = c.Start(4).checkpoint_interval_seconds();
  CHECK_FALSE(c.feature.OnNodeDown("n1", /*was_up=*/true));
  CHECK_FALSE(c.feature.OnNodeDown("n2", /*was_up=*/false));  // not counted
  CHECK(c.feature.failure_rate().observed_failures == 1);
  const v1::JobRecord& job = c.Start(4);
  CHECK(job.checkpoint_interval_seconds() < before);
  CHECK(job.checkpoint_interval_basis().find("1 failures") !=
        std::string::npos);
}

TEST_CASE("a measured checkpoint cost replaces the assumed one") {
  Cluster c;
  const v1::JobRecord& job = c.Start(2, 120);
  CHECK(job.checkpoint_interval_seconds() ==
        std::round(*OptimalCheckpointIntervalSeconds(120, 6329.0 * 3600 / 2)));
  CHECK(job.checkpoint_interval_basis().find("120.0 s checkpoint (measured)") !=
        std::string::npos);
}

TEST_CASE("no MTBF from the site, no interval") {
  Cluster c({.node_mtbf_hours = 0, .checkpoint_cost_seconds = 30});
  const v1::JobRecord& job = c.Start(4);
  CHECK(job.checkpoint_interval_seconds() == 0);
  CHECK(job.checkpoint_interval_basis().empty());
}

}  // namespace checkpoint_interval_feature_test
}  // namespace gantry
