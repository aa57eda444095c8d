// The in-memory checkpoint feature (daemon/controller/features/
// memory_checkpoints/) through its hooks over a fake context: the plans
// and their peers, the protected step recorded as the job's memory
// checkpoint, a restart's restore and its launch fields, a failed restore,
// and the drop once a job's end is durable. The ledger's own decisions are
// memory_checkpoint_ledger_test's; with real agents,
// integration.memory_checkpoints.
#include "daemon/controller/features/memory_checkpoints/memory_checkpoint_feature.h"

#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/unit/daemon/controller/features/fake_feature_context.h"
#include "tests/unit/daemon/controller/features/memory_checkpoint_reports.h"

namespace gantry {
namespace memory_checkpoint_feature_test {

constexpr uint64_t kJob = 7;
constexpr int64_t kStart = 1'000'000;

// Job 7's snapshots: rank, step, whether a replica.
v1::MemoryCheckpointReport Holding(
    std::initializer_list<std::tuple<uint32_t, int64_t, bool>> entries) {
  v1::MemoryCheckpointReport report;
  for (const auto& [rank, step, replica] : entries) {
    report.MergeFrom(HeldSnapshots({{kJob, rank, step, replica}}));
  }
  return report;
}

// Leaf A: a1, a2; leaf B: b1, b2; each registered with a snapshot port.
// Job 7 (--memory-checkpoints, one rank per node) runs its first attempt
// on a1 and a2.
struct Cluster {
  Cluster() : context(kStart), feature(context) {
    for (const char* name : {"a1", "a2", "b1", "b2"}) {
      v1::NodeRecord& node = context.nodes[name];
      node.set_name(name);
      node.set_address(std::string("10.0.0.") + name);
      node.set_state(v1::NODE_UP);
      context.leaf_switches[name] = {std::string("leaf-") + name[0]};
      Register(name, v1::MemoryCheckpointReport());
    }
    v1::JobRecord& job = context.jobs[kJob];
    job.set_id(kJob);
    job.mutable_spec()->set_memory_checkpoints(true);
    Start({"a1", "a2"});
    context.sent.clear();
    context.events.clear();
  }
  void Register(const std::string& node,
                const v1::MemoryCheckpointReport& report) {
    v1::Register registration;
    registration.set_memory_checkpoint_port(port(node));
    *registration.mutable_memory_checkpoints() = report;
    feature.OnNodeRegistered(node, registration);
  }
  static uint32_t port(const std::string& node) {
    return node == "a1"   ? 7001
           : node == "a2" ? 7002
           : node == "b1" ? 7003
                          : 7004;
  }
  // A new attempt on `nodes`, as the core starts one.
  void Start(const std::vector<std::string>& nodes) {
    v1::JobRecord& job = context.jobs[kJob];
    job.set_state(v1::RUNNING);
    job.set_attempt(job.attempt() + 1);
    job.clear_allocation();
    v1::AttemptRecord& attempt = *job.add_attempts();
    attempt.set_attempt(job.attempt());
    uint32_t rank = 0;
    for (const std::string& node : nodes) {
      v1::NodeAllocation& share = *job.add_allocation();
      share.set_node(node);
      share.set_rank_count(1);
      share.set_first_rank(rank++);
      attempt.add_nodes(node);
    }
    context.live.insert(kJob);
    feature.OnJobStarted(job);
  }
  // Rank 0's step on a1 with its replica on b1, rank 1's on a2 with b2's.
  void HoldStep(int64_t step) {
    feature.OnHeartbeat("a1", Beat(Holding({{0, step, false}})));
    feature.OnHeartbeat("a2", Beat(Holding({{1, step, false}})));
    feature.OnHeartbeat("b1", Beat(Holding({{0, step, true}})));
    feature.OnHeartbeat("b2", Beat(Holding({{1, step, true}})));
  }
  static v1::Heartbeat Beat(const v1::MemoryCheckpointReport& report) {
    v1::Heartbeat beat;
    *beat.mutable_memory_checkpoints() = report;
    return beat;
  }
  const v1::JobRecord& job() { return context.jobs[kJob]; }
  // The plans sent since the last clear, by node.
  std::map<std::string, v1::MemoryCheckpointPlan> Plans() const {
    std::map<std::string, v1::MemoryCheckpointPlan> plans;
    for (const auto& [node, message] : context.sent) {
      if (message.has_memory_checkpoint_plan()) {
        plans[node] = message.memory_checkpoint_plan();
      }
    }
    return plans;
  }
  std::set<std::string> DropsSent() const {
    std::set<std::string> nodes;
    for (const auto& [node, message] : context.sent) {
      if (message.has_memory_checkpoint_drop()) nodes.insert(node);
    }
    return nodes;
  }

  FakeFeatureContext context;
  MemoryCheckpointFeature feature;
};

TEST_CASE("a started job's nodes push to peers in another failure domain") {
  Cluster c;
  c.context.sent.clear();
  c.Start({"a1", "a2"});
  const auto plans = c.Plans();
  // The job's nodes and their peers learn the plan, with one token.
  REQUIRE(plans.size() == 4);
  const std::string token = plans.at("a1").token();
  CHECK(token.size() == 32);
  for (const auto& [node, plan] : plans) {
    CHECK(plan.job_id() == kJob);
    CHECK(plan.token() == token);
  }
  // The job's nodes share leaf A: each pushes to its own node of leaf B.
  const v1::MemoryCheckpointPeer& peer = plans.at("a1").replicate_to();
  CHECK(peer.node() == "b1");
  CHECK(peer.address() == "10.0.0.b1");
  CHECK(peer.port() == 7003);
  CHECK(plans.at("a2").replicate_to().node() == "b2");
  CHECK_FALSE(plans.at("b1").has_replicate_to());
  CHECK(c.job().memory_restore_step() == 0);
}

TEST_CASE("a step every rank holds in two domains is the job's checkpoint") {
  Cluster c;
  // Rank 1 reported on a2 only: nothing is protected yet.
  c.feature.OnHeartbeat("a1", Cluster::Beat(Holding({{0, 40, false}})));
  c.feature.OnHeartbeat("b1", Cluster::Beat(Holding({{0, 40, true}})));
  c.feature.OnHeartbeat("a2", Cluster::Beat(Holding({{1, 40, false}})));
  CHECK_FALSE(c.job().has_memory_checkpoint());
  CHECK(c.context.checkpointed.empty());

  c.feature.OnHeartbeat("b2", Cluster::Beat(Holding({{1, 40, true}})));
  REQUIRE(c.job().has_memory_checkpoint());
  CHECK(c.job().memory_checkpoint().step() == 40);
  CHECK(c.job().memory_checkpoint().source() == "memory");
  CHECK(c.job().memory_checkpoint().time_ms() == kStart);
  CHECK(c.job().progress_step() == 40);
  CHECK(c.context.checkpointed == std::vector<uint64_t>{kJob});
  REQUIRE(c.context.events.size() == 1);
  CHECK(c.context.events[0].kind == "memory_checkpoint");

  // The same step again changes nothing.
  c.HoldStep(40);
  CHECK(c.context.checkpointed.size() == 1);
}

TEST_CASE("a restart restores each rank from where its snapshot is held") {
  Cluster c;
  c.HoldStep(40);
  // a1 is gone; the restart runs rank 0 on b2 instead and rank 1 on a2.
  c.context.disconnected.insert("a1");
  c.context.nodes["a1"].set_state(v1::NODE_DOWN);
  c.context.events.clear();
  c.Start({"b2", "a2"});
  CHECK(c.job().memory_restore_step() == 40);
  REQUIRE(c.context.events.size() == 1);
  CHECK(c.context.events[0].kind == "memory_restore");
  CHECK_THAT(c.context.events[0].detail,
             Catch::Contains("rank 0 on b2 from b1") &&
                 Catch::Contains("rank 1 on a2 from a2"));

  v1::LaunchRanks on_b2;
  c.feature.FillLaunch(c.job(), "b2", on_b2);
  CHECK(on_b2.memory_checkpoints());
  REQUIRE(on_b2.memory_restore().sources_size() == 1);
  CHECK(on_b2.memory_restore().step() == 40);
  CHECK(on_b2.memory_restore().token() == c.Plans().at("b2").token());
  const v1::MemoryRestore::Source& source = on_b2.memory_restore().sources(0);
  CHECK(source.rank() == 0);
  CHECK(source.holder().node() == "b1");
  CHECK(source.holder().address() == "10.0.0.b1");
  CHECK(source.holder().port() == 7003);

  // A job without --memory-checkpoints gets nothing of it.
  v1::JobRecord plain = c.job();
  plain.mutable_spec()->set_memory_checkpoints(false);
  v1::LaunchRanks launch;
  c.feature.FillLaunch(plain, "b2", launch);
  CHECK_FALSE(launch.memory_checkpoints());
  CHECK_FALSE(launch.has_memory_restore());
}

TEST_CASE("a persistent checkpoint as new as the snapshot wins the restart") {
  Cluster c;
  c.HoldStep(40);
  v1::CheckpointInfo& persistent =
      *c.context.jobs[kJob].mutable_latest_checkpoint();
  persistent.set_path("/ckpt/step-40");
  persistent.set_step(40);
  c.Start({"a1", "a2"});
  CHECK(c.job().memory_restore_step() == 0);
  v1::LaunchRanks launch;
  c.feature.FillLaunch(c.job(), "a1", launch);
  CHECK(launch.memory_checkpoints());
  CHECK_FALSE(launch.has_memory_restore());
}

TEST_CASE("a failed restore resumes from disk until a newer step is held") {
  Cluster c;
  c.HoldStep(40);
  c.Start({"a1", "a2"});
  REQUIRE(c.job().memory_restore_step() == 40);
  v1::AgentMessage failed;
  v1::RankEvent& event = *failed.mutable_rank_event();
  event.set_kind(v1::RankEvent::LAUNCH_FAILED);
  event.set_memory_restore_failed(true);
  event.mutable_rank()->set_job_id(kJob);
  event.mutable_rank()->set_attempt(c.job().attempt());
  c.feature.OnAgentMessage("a1", failed);

  c.Start({"a1", "a2"});
  CHECK(c.job().memory_restore_step() == 0);
  // Step 50 protected: the next restart may try memory again.
  c.HoldStep(50);
  c.Start({"a1", "a2"});
  CHECK(c.job().memory_restore_step() == 50);
}

TEST_CASE("a job's snapshots are dropped once its end is durable") {
  Cluster c;
  c.HoldStep(40);
  c.context.jobs[kJob].set_state(v1::COMPLETED);
  c.feature.OnJobFinished(c.job());
  CHECK(c.DropsSent().empty());
  c.context.Commit();
  CHECK(c.DropsSent() == std::set<std::string>{"a1", "a2", "b1", "b2"});

  // A node reporting the ended job's snapshots later is told to drop them.
  c.context.sent.clear();
  c.feature.OnHeartbeat("b1", Cluster::Beat(Holding({{0, 40, true}})));
  CHECK(c.DropsSent() == std::set<std::string>{"b1"});
  CHECK(c.job().memory_checkpoint().step() == 40);
}

TEST_CASE("a peer's stream ending sends its jobs new plans") {
  Cluster c;
  c.context.sent.clear();
  // a2 is not a peer of job 7's nodes (they push to leaf B): nothing to do.
  c.context.disconnected.insert("a2");
  c.feature.OnNodeDisconnected("a2");
  CHECK(c.Plans().empty());
  c.context.disconnected.clear();

  // b1 was a1's peer: a1 pushes to b2 now, the other node of leaf B.
  c.context.disconnected.insert("b1");
  c.feature.OnNodeDisconnected("b1");
  const auto plans = c.Plans();
  CHECK(plans.count("b1") == 0);
  REQUIRE(plans.count("a1") == 1);
  CHECK(plans.at("a1").replicate_to().node() == "b2");

  // A job no longer running is not replanned, and leaves the list.
  c.context.sent.clear();
  c.context.jobs[kJob].set_state(v1::PENDING);
  c.context.disconnected.clear();
  c.feature.OnNodeRegistered("b1", v1::Register());
  CHECK(c.Plans().empty());
}

}  // namespace memory_checkpoint_feature_test
}  // namespace gantry
