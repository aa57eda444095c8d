// The pre-flight feature (daemon/controller/features/preflight/) through its
// hooks over a fake context: the check it sends, the launch it holds and
// releases, the nodes it blames and the attempt it ends. The verdict's own
// rules are daemon/scheduler's (preflight_verdict_test.cc); the whole path
// with real agents is integration.preflight.
#include "daemon/controller/features/preflight/preflight_feature.h"

#include <catch2/catch.hpp>
#include <string>

#include "daemon/controller/core/preflight_record.h"
#include "tests/unit/daemon/controller/features/fake_feature_context.h"

namespace gantry {
namespace preflight_feature_test {

constexpr uint64_t kJob = 9;
constexpr int64_t kStart = 1'000'000;

PreflightOptions MultiNode() {
  PreflightOptions options;
  options.mode = PreflightOptions::Mode::kMultiNode;
  options.timeout_ms = 5'000;
  return options;
}

// Nodes n1-n3 registered (pre-flight port 7000 + i) and connected; job 9
// running on them, attempt 1 just started.
struct Cluster {
  explicit Cluster(PreflightOptions options = MultiNode())
      : context(kStart), feature(context, options) {
    v1::JobRecord job;
    job.set_id(kJob);
    job.set_state(v1::RUNNING);
    job.set_attempt(1);
    job.add_attempts()->set_start_time_ms(kStart);
    for (int i = 1; i <= 3; ++i) {
      const std::string name = "n" + std::to_string(i);
      v1::NodeRecord node;
      node.set_name(name);
      node.set_address("10.0.0." + std::to_string(i));
      context.nodes[name] = node;
      v1::Register registration;
      registration.set_preflight_port(7000 + i);
      feature.OnNodeRegistered(name, registration);
      job.add_allocation()->set_node(name);
    }
    context.jobs[kJob] = job;
    context.controller_started_ms = kStart - 60'000;
  }

  const v1::JobRecord& job() { return context.jobs.at(kJob); }

  // The job starts and its launch comes: held, and the check sent.
  void StartAndLaunch() {
    feature.OnJobStarted(job());
    REQUIRE(feature.HoldLaunch(job(), /*whole=*/true));
  }

  void Answer(const std::string& node, bool passed,
              const std::string& problem = "") {
    v1::AgentMessage message;
    v1::PreflightResult& result = *message.mutable_preflight_result();
    result.set_job_id(kJob);
    result.set_attempt(1);
    result.set_passed(passed);
    result.set_problem(problem);
    result.set_send_mbps(1000);
    result.set_receive_mbps(1000);
    feature.OnAgentMessage(node, message);
  }

  FakeFeatureContext context;
  PreflightFeature feature;
};

TEST_CASE("a job that wants the check is held until every node passes") {
  Cluster cluster;
  cluster.StartAndLaunch();
  CHECK(cluster.job().reason() == kPreflightReason);
  CHECK(cluster.job().attempts(0).preflight_start_ms() == kStart);
  CHECK(PreflightInProgress(cluster.job()));
  // One check to each node, naming the ring with addresses and ports.
  REQUIRE(cluster.context.sent.size() == 3);
  const v1::PreflightCheck& check = cluster.context.sent[1].second.preflight();
  CHECK(cluster.context.sent[1].first == "n2");
  CHECK(check.index() == 1);
  REQUIRE(check.peers_size() == 3);
  CHECK(check.peers(2).address() == "10.0.0.3");
  CHECK(check.peers(2).port() == 7003);
  CHECK(check.timeout_ms() == 5'000);
  // A second launch (or one node's again) sends nothing more and holds.
  CHECK(cluster.feature.HoldLaunch(cluster.job(), /*whole=*/true));
  CHECK(cluster.feature.HoldLaunch(cluster.job(), /*whole=*/false));
  CHECK(cluster.context.sent.size() == 3);
  CHECK(cluster.feature.HoldsRanks(cluster.job()));

  cluster.context.fake_clock.AdvanceMs(1'500);
  cluster.Answer("n1", true);
  cluster.Answer("n2", true);
  CHECK(cluster.context.released.empty());
  cluster.Answer("n3", true);
  CHECK(cluster.context.released == std::vector<uint64_t>{kJob});
  CHECK(cluster.context.requeued.empty());
  const v1::AttemptRecord& attempt = cluster.job().attempts(0);
  CHECK(attempt.preflight_end_ms() == kStart + 1'500);
  CHECK(attempt.preflight_summary().rfind("passed in 1.5 s on 3 nodes", 0) ==
        0);
  REQUIRE(cluster.context.events.size() == 1);
  CHECK(cluster.context.events[0].kind == "preflight");
  // Done: the launch goes out and the ranks are the core's again.
  CHECK_FALSE(cluster.feature.HoldLaunch(cluster.job(), /*whole=*/true));
  CHECK_FALSE(cluster.feature.HoldsRanks(cluster.job()));
}

TEST_CASE("a failing node is drained and the attempt ends uncharged") {
  Cluster cluster;
  cluster.StartAndLaunch();
  cluster.Answer("n1", true);
  cluster.Answer("n2", false, "GPU 3 is lost");
  cluster.Answer("n3", true);
  CHECK(cluster.context.released.empty());
  CHECK(cluster.context.drained == std::vector<std::string>{"n2"});
  REQUIRE(cluster.context.requeued.size() == 1);
  const auto& requeue = cluster.context.requeued[0];
  CHECK_FALSE(requeue.hold);
  CHECK(requeue.reason == kPreflightReason);
  CHECK(requeue.detail.rfind("pre-flight swapped out n2 (", 0) == 0);
  const v1::AttemptRecord& attempt = cluster.job().attempts(0);
  REQUIRE(attempt.preflight_findings_size() == 1);
  CHECK(attempt.preflight_findings(0).node() == "n2");
}

TEST_CASE("most of the gang failing blames nobody and holds the job") {
  Cluster cluster;
  cluster.StartAndLaunch();
  cluster.Answer("n1", false, "the site command is missing");
  cluster.Answer("n2", false, "the site command is missing");
  cluster.Answer("n3", true);
  CHECK(cluster.context.drained.empty());
  REQUIRE(cluster.context.requeued.size() == 1);
  CHECK(cluster.context.requeued[0].hold);
  CHECK(cluster.context.requeued[0].reason == "PreflightFailed");
  CHECK(cluster.context.requeued[0].reason_detail.find(
            "starts again after gantry release 9") != std::string::npos);
}

TEST_CASE("a silent node is judged at the deadline, a lost one at once") {
  SECTION("silent") {
    Cluster cluster;
    cluster.StartAndLaunch();
    cluster.Answer("n1", true);
    cluster.Answer("n2", true);
    cluster.context.fake_clock.AdvanceMs(5'000);
    cluster.feature.OnTick(1);
    CHECK(cluster.context.requeued.empty());  // the answers' grace
    cluster.context.fake_clock.AdvanceMs(PreflightFeature::kAnswerGraceMs);
    cluster.feature.OnTick(2);
    CHECK(cluster.context.drained == std::vector<std::string>{"n3"});
    CHECK(cluster.context.requeued.size() == 1);
  }
  SECTION("lost") {
    Cluster cluster;
    cluster.StartAndLaunch();
    cluster.Answer("n1", true);
    cluster.Answer("n3", true);
    CHECK(cluster.feature.OnNodeLost(cluster.job(), "n2"));
    CHECK(cluster.context.drained == std::vector<std::string>{"n2"});
    CHECK(cluster.context.requeued.size() == 1);
    // Not in its pre-flight any more: a loss is the core's to handle.
    CHECK_FALSE(cluster.feature.OnNodeLost(cluster.job(), "n1"));
  }
}

TEST_CASE("a check a controller restart lost is sent once the nodes are back") {
  Cluster cluster;
  cluster.feature.OnJobStarted(cluster.job());
  // The record says the check began before this controller started.
  cluster.context.controller_started_ms = kStart + 1;
  cluster.context.disconnected = {"n3"};
  CHECK(cluster.feature.HoldsRanks(cluster.job()));
  CHECK(cluster.context.sent.empty());
  cluster.context.disconnected.clear();
  CHECK(cluster.feature.HoldsRanks(cluster.job()));
  CHECK(cluster.context.sent.size() == 3);
}

TEST_CASE("a job that does not want the check is left alone") {
  PreflightOptions off;
  Cluster cluster(off);
  cluster.feature.OnJobStarted(cluster.job());
  CHECK(cluster.job().reason().empty());
  CHECK_FALSE(cluster.feature.HoldLaunch(cluster.job(), /*whole=*/true));
  CHECK_FALSE(cluster.feature.HoldsRanks(cluster.job()));
  CHECK(cluster.context.sent.empty());
  // Asked for by the job itself (--preflight), it runs even so.
  cluster.context.jobs[kJob].mutable_spec()->set_preflight(true);
  cluster.feature.OnJobStarted(cluster.job());
  CHECK(cluster.feature.HoldLaunch(cluster.job(), /*whole=*/true));
  CHECK(cluster.context.sent.size() == 3);
}

}  // namespace preflight_feature_test
}  // namespace gantry
