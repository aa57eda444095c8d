// The elastic feature (daemon/controller/features/elastic/) through its
// hooks over a fake context: a running --elastic job below its full size
// grows when the missing nodes are free, at once without a checkpoint,
// else at its next one; never while another job of its partition waits,
// nor twice in a row when a grow fell short. DecideGrow's own table is
// node_range_test's; with real agents, integration.elastic_shrink.
#include "daemon/controller/features/elastic/elastic_feature.h"

#include <catch2/catch.hpp>
#include <string>

#include "tests/unit/daemon/controller/features/fake_feature_context.h"

namespace gantry {
namespace elastic_feature_test {

constexpr uint64_t kJob = 3;
constexpr int64_t kStart = 1'000'000;

// Job 3 (--nodes=2-4 --elastic) runs its first attempt on two nodes.
struct Cluster {
  Cluster() : context(kStart), feature(context) {
    v1::JobRecord& job = context.jobs[kJob];
    job.set_id(kJob);
    job.set_state(v1::RUNNING);
    job.set_attempt(1);
    job.add_attempts()->set_attempt(1);
    v1::JobSpec& spec = *job.mutable_spec();
    spec.set_nodes(4);
    spec.set_min_nodes(2);
    spec.set_elastic(true);
    spec.set_partition("gpu");
    job.add_allocation()->set_node("n1");
    job.add_allocation()->set_node("n2");
    context.live.insert(kJob);
    feature.OnJobStarted(job);
  }
  v1::JobRecord& job() { return context.jobs[kJob]; }
  void Checkpoint(int64_t at_ms) {
    job().mutable_latest_checkpoint()->set_time_ms(at_ms);
    feature.OnCheckpoint(job());
  }
  // Another job of the partition waiting for nodes.
  void Waiting(const std::string& partition) {
    v1::JobRecord& other = context.jobs[kJob + 1];
    other.set_id(kJob + 1);
    other.set_state(v1::PENDING);
    other.set_reason("Resources");
    other.mutable_spec()->set_partition(partition);
    context.live.insert(kJob + 1);
  }

  FakeFeatureContext context;
  ElasticFeature feature;
};

TEST_CASE("an elastic job without a checkpoint grows as soon as nodes free") {
  Cluster c;
  c.feature.AfterSchedulingPass();
  CHECK(c.context.restarts.empty());  // nothing free yet

  c.context.free_beside = 1;  // one of the two missing: not worth a restart
  c.feature.AfterSchedulingPass();
  CHECK(c.context.restarts.empty());

  c.context.free_beside = 2;
  c.feature.AfterSchedulingPass();
  REQUIRE(c.context.restarts.size() == 1);
  CHECK(c.context.restarts[0].job_id == kJob);
  CHECK(c.context.restarts[0].end_reason.empty());  // a requeue's own
  CHECK(c.context.restarts[0].detail ==
        "resized: restarting on 4 node(s) (from 2, --elastic)");
}

TEST_CASE("an elastic job with a checkpoint grows at its next one") {
  Cluster c;
  c.Checkpoint(kStart + 10);
  c.context.free_beside = 2;
  c.feature.AfterSchedulingPass();
  CHECK(c.context.restarts.empty());
  REQUIRE(c.context.events.size() == 1);
  CHECK(c.context.events[0].kind == "resize");
  CHECK(c.context.events[0].detail ==
        "2 node(s) free: growing to 4 node(s) at the next checkpoint");
  // Said once, however many passes wait.
  c.feature.AfterSchedulingPass();
  CHECK(c.context.events.size() == 1);

  // The next checkpoint asks for a pass, which restarts the job.
  c.Checkpoint(kStart + 20);
  CHECK(c.context.schedules_requested == 1);
  c.feature.AfterSchedulingPass();
  CHECK(c.context.restarts.size() == 1);
}

TEST_CASE("an elastic job does not take nodes a waiting job could use") {
  Cluster c;
  c.context.free_beside = 2;
  c.Waiting("gpu");
  c.feature.AfterSchedulingPass();
  CHECK(c.context.restarts.empty());
  // One waiting in another partition does not hold it back.
  c.context.jobs[kJob + 1].mutable_spec()->set_partition("cpu");
  c.feature.AfterSchedulingPass();
  CHECK(c.context.restarts.size() == 1);
}

TEST_CASE("a grow that fell short is not tried again in the same attempt") {
  Cluster c;
  // Attempt 2 started from a grow, on three nodes.
  v1::JobRecord& job = c.job();
  job.mutable_attempts(0)->set_end_detail(
      "resized: restarting on 4 node(s) (from 2, --elastic)");
  job.add_attempts()->set_attempt(2);
  job.set_attempt(2);
  job.add_allocation()->set_node("n3");
  c.feature.OnJobStarted(job);
  c.context.free_beside = 1;
  c.feature.AfterSchedulingPass();
  CHECK(c.context.restarts.empty());
}

TEST_CASE("jobs at full size, ended, or found after a restart") {
  Cluster c;
  c.context.free_beside = 4;
  // A job at its full size is none of the feature's.
  v1::JobRecord& full = c.context.jobs[9];
  full = c.job();
  full.set_id(9);
  full.add_allocation()->set_node("n3");
  full.add_allocation()->set_node("n4");
  c.feature.OnJobStarted(full);
  // Job 3 ended before the pass.
  c.job().set_state(v1::COMPLETED);
  c.feature.AfterSchedulingPass();
  CHECK(c.context.restarts.empty());

  // A controller that restarted finds its running jobs below full size in
  // the loaded state.
  c.job().set_state(v1::RUNNING);
  ElasticFeature restarted(c.context);
  restarted.OnStateLoaded(nullptr);
  restarted.AfterSchedulingPass();
  REQUIRE(c.context.restarts.size() == 1);
  CHECK(c.context.restarts[0].job_id == kJob);
}

}  // namespace elastic_feature_test
}  // namespace gantry
