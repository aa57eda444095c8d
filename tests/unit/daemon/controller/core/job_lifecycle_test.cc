// The job lifecycle on the core's parts alone: a start takes the node
// shares and launches only once stored, a failure asks the restart policy
// (requeue with a backoff, or the end and its fair-share charge), a share
// is given back only once its ranks are gone, an event the state machine
// refuses changes nothing, and only a newer checkpoint counts.
#include "daemon/controller/core/job_lifecycle.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/unit/support/core_parts_harness.h"

namespace gantry {
namespace job_lifecycle_test {

struct Harness {
  Harness() {
    core.AddNode("n1", 2);
    core.AddNode("n2", 2);
  }

  // A pending job of two ranks placed on n1 (both GPUs) and n2 (one),
  // with --max-restarts `max_restarts`.
  JobRuntime& PlacedJob(uint32_t max_restarts) {
    v1::JobSpec spec;
    spec.set_name("train");
    spec.set_script("#!/bin/sh\ntrue\n");
    spec.set_max_restarts(max_restarts);
    JobRuntime& job = core.AddJob(spec);
    v1::NodeAllocation& first = *job.record.add_allocation();
    first.set_node("n1");
    first.set_cpus(2);
    first.add_gpu_indices(0);
    first.add_gpu_indices(1);
    first.set_first_rank(0);
    first.set_rank_count(1);
    v1::NodeAllocation& second = *job.record.add_allocation();
    second.set_node("n2");
    second.set_cpus(2);
    second.add_gpu_indices(0);
    second.set_first_rank(1);
    second.set_rank_count(1);
    return job;
  }

  // How many messages of `kind` (launch or kill) node `node` was sent.
  size_t Sent(const std::string& node, v1::ControllerMessage::BodyCase kind) {
    size_t count = 0;
    for (const v1::ControllerMessage& message : core.links.at(node)->sent) {
      if (message.body_case() == kind) ++count;
    }
    return count;
  }

  CoreParts core;
  std::vector<std::string> steps_ended;
  JobLifecycle lifecycle{
      core.LifecycleParts(),
      {.end_open_steps = [this](JobRuntime&, const std::string& detail) {
        steps_ended.push_back(detail);
      }}};
};

TEST_CASE("A start takes the shares and launches once it is stored",
          "[job_lifecycle]") {
  Harness harness;
  JobRuntime& job = harness.PlacedJob(0);
  harness.lifecycle.StartJob(job);

  CHECK(job.record.state() == v1::RUNNING);
  CHECK(job.record.attempt() == 1);
  REQUIRE(job.record.attempts_size() == 1);
  CHECK(job.record.attempts(0).nodes_size() == 2);
  CHECK(harness.core.state.nodes.at("n1").usage.gpus ==
        std::set<uint32_t>{0, 1});
  CHECK(harness.core.state.nodes.at("n2").usage.cpus == 2);
  CHECK(job.occupied_nodes == std::set<std::string>{"n1", "n2"});
  // Not a message before the start is durable.
  CHECK(harness.core.links.at("n1")->sent.empty());

  REQUIRE(harness.core.Flush());
  REQUIRE(harness.Sent("n1", v1::ControllerMessage::kLaunch) == 1);
  CHECK(harness.Sent("n2", v1::ControllerMessage::kLaunch) == 1);
  const v1::LaunchRanks& launch = harness.core.links.at("n2")->sent[0].launch();
  CHECK(launch.job_id() == job.record.id());
  CHECK(launch.attempt() == 1);
  REQUIRE(launch.ranks_size() == 1);
  CHECK(launch.ranks(0).rank() == 1);
  CHECK(harness.core.store.Load()->jobs.at(0).state() == v1::RUNNING);
}

TEST_CASE("A failure with restarts left requeues the job behind a backoff",
          "[job_lifecycle]") {
  Harness harness;
  JobRuntime& job = harness.PlacedJob(2);
  harness.lifecycle.StartJob(job);
  REQUIRE(harness.core.Flush());
  harness.core.clock.AdvanceMs(5000);

  harness.lifecycle.FailJob(job, FailureKind::kApplication, 3, 0,
                            /*all_ranks_exited=*/false, "rank 0 exited 3");
  CHECK(job.record.state() == v1::PENDING);
  CHECK(job.record.reason() == "Restarting");
  CHECK(job.record.eligible_time_ms() > harness.core.clock.NowMs());
  CHECK(job.record.attempts(0).end_time_ms() == harness.core.clock.NowMs());
  CHECK(harness.steps_ended.size() == 1);
  // The ranks still run: their shares stay taken until they are gone.
  CHECK(job.occupied_nodes.size() == 2);
  REQUIRE(harness.core.Flush());
  CHECK(harness.Sent("n1", v1::ControllerMessage::kKill) == 1);
  CHECK(harness.Sent("n2", v1::ControllerMessage::kKill) == 1);

  job.live_ranks["n1"] = 0;
  harness.lifecycle.ReleaseFinished(job);
  CHECK(job.occupied_nodes == std::set<std::string>{"n2"});
  CHECK(harness.core.state.nodes.at("n1").usage.gpus.empty());
  CHECK(harness.core.state.nodes.at("n2").usage.cpus == 2);
  job.live_ranks["n2"] = 0;
  harness.lifecycle.ReleaseFinishedOn(job, "n2");
  CHECK(job.occupied_nodes.empty());
  CHECK(harness.core.state.nodes.at("n2").usage.cpus == 0);
  // Freed nodes ask for a scheduling pass.
  CHECK(harness.core.PumpUntil([&] { return harness.core.passes_run > 0; }));
}

TEST_CASE("A failure without restarts ends the job and charges its user",
          "[job_lifecycle]") {
  Harness harness;
  JobRuntime& job = harness.PlacedJob(0);
  harness.lifecycle.StartJob(job);
  harness.core.clock.AdvanceMs(10'000);
  harness.lifecycle.FailJob(job, FailureKind::kApplication, 1, 0,
                            /*all_ranks_exited=*/true, "exited 1");
  CHECK(job.record.state() == v1::FAILED);
  CHECK(job.record.exit_code() == 1);
  CHECK(job.record.end_time_ms() == harness.core.clock.NowMs());
  CHECK(harness.core.state.finished_jobs == 1);
  REQUIRE(harness.core.state.finished_order.size() == 1);
  CHECK(harness.core.state.finished_order.front().second == job.record.id());
  // Three GPUs for ten seconds.
  CHECK(harness.lifecycle.fair_share().Usage(
            "alice", harness.core.clock.NowMs()) == Approx(30.0));
}

TEST_CASE("An event the state machine refuses changes nothing",
          "[job_lifecycle]") {
  Harness harness;
  JobRuntime& job = harness.PlacedJob(0);
  harness.lifecycle.StartJob(job);
  const std::string before = job.record.SerializeAsString();
  CHECK_FALSE(
      harness.lifecycle.ApplyEvent(job, {JobEvent::Kind::kStart}, "again")
          .ok());
  CHECK(job.record.SerializeAsString() == before);
}

TEST_CASE("Only a newer checkpoint counts, and its cost is smoothed",
          "[job_lifecycle]") {
  Harness harness;
  JobRuntime& job = harness.PlacedJob(0);
  harness.lifecycle.StartJob(job);

  harness.lifecycle.RecordCheckpoint(job, "/ck/10", 10, "report", 10);
  CHECK(job.record.latest_checkpoint().path() == "/ck/10");
  CHECK(job.record.checkpoint_cost_seconds() == Approx(10));
  // An older step (a marker file read late) does not replace it.
  harness.lifecycle.RecordCheckpoint(job, "/ck/5", 5, "marker");
  CHECK(job.record.latest_checkpoint().path() == "/ck/10");
  harness.lifecycle.RecordCheckpoint(job, "/ck/20", 20, "report", 20);
  CHECK(job.record.latest_checkpoint().step() == 20);
  CHECK(job.record.checkpoint_cost_seconds() == Approx(0.7 * 10 + 0.3 * 20));
  REQUIRE(harness.core.Flush());
  CHECK(harness.core.store.Load()->jobs.at(0).latest_checkpoint().path() ==
        "/ck/20");
}

}  // namespace job_lifecycle_test
}  // namespace gantry
