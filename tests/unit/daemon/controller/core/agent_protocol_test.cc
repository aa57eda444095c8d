// The agent protocol on the core's parts alone: a registration brings the
// node up and is welcomed, while a second live agent claiming the same
// name is refused; a report on a rank the node does not hold cuts its
// stream and changes no job; a rank's exit fails the attempt and is
// acknowledged only once that is durable.
#include "daemon/controller/core/agent_protocol.h"

#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include "tests/unit/support/core_parts_harness.h"

namespace gantry {
namespace agent_protocol_test {

struct Harness {
  // Registers `name` on a new link, as its agent's first message.
  std::shared_ptr<RecordingLink> Register(const std::string& name,
                                          const std::string& boot_id) {
    auto link = std::make_shared<RecordingLink>();
    v1::AgentMessage message;
    v1::Register& reg = *message.mutable_register_();
    reg.set_node_name(name);
    reg.set_address("192.0.2." + boot_id);
    reg.set_boot_id(boot_id);
    reg.set_agent_instance("instance-" + boot_id);
    reg.mutable_inventory()->set_cpus(8);
    reg.mutable_inventory()->set_memory_mb(16'000);
    agents.OnAgentMessage(link, message);
    return link;
  }

  // A job of one rank, started on `node`, with no restarts.
  JobRuntime& RunningJobOn(const std::string& node) {
    v1::JobSpec spec;
    spec.set_script("#!/bin/sh\ntrue\n");
    spec.set_max_restarts(0);
    JobRuntime& job = core.AddJob(spec);
    v1::NodeAllocation& share = *job.record.add_allocation();
    share.set_node(node);
    share.set_cpus(1);
    share.set_rank_count(1);
    lifecycle.StartJob(job);
    REQUIRE(core.Flush());
    return job;
  }

  v1::AgentMessage RankExit(const JobRuntime& job, int exit_code,
                            uint64_t sequence) {
    v1::AgentMessage message;
    v1::RankEvent& event = *message.mutable_rank_event();
    event.set_sequence(sequence);
    event.set_kind(v1::RankEvent::EXITED);
    event.set_exit_code(exit_code);
    event.mutable_rank()->set_job_id(job.record.id());
    event.mutable_rank()->set_attempt(job.record.attempt());
    event.mutable_rank()->set_rank(0);
    return message;
  }

  CoreParts core;
  JobLifecycle lifecycle{
      core.LifecycleParts(),
      {.end_open_steps = [this](JobRuntime& job, const std::string& detail) {
        steps.EndOpenSteps(job, detail);
      }}};
  JobSteps steps{{.clock = core.clock,
                  .options = core.options,
                  .state = core.state,
                  .commits = core.commits,
                  .lifecycle = lifecycle,
                  .features = core.features}};
  NodeAdministration nodes{core.NodeAdministrationParts(lifecycle)};
  SwitchTree tree{core.clock, core.options, core.state, core.commits};
  AgentProtocol agents{{.clock = core.clock,
                        .options = core.options,
                        .state = core.state,
                        .commits = core.commits,
                        .passes = core.passes,
                        .lifecycle = lifecycle,
                        .steps = steps,
                        .nodes = nodes,
                        .switch_tree = tree,
                        .features = core.features}};
};

TEST_CASE("A registration brings the node up, and a live name is kept",
          "[agent_protocol]") {
  Harness harness;
  std::shared_ptr<RecordingLink> first = harness.Register("n1", "1");
  const NodeRuntime& node = harness.core.state.nodes.at("n1");
  CHECK(node.record.state() == v1::NODE_UP);
  CHECK(node.link == first);
  REQUIRE(first->sent.size() == 1);
  CHECK(first->sent[0].has_registered());

  // Another host (another boot and address) under the same name while the
  // first agent is alive: refused, and the first keeps the name.
  std::shared_ptr<RecordingLink> impostor = harness.Register("n1", "2");
  CHECK(impostor->closed);
  CHECK(impostor->close_status.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(harness.core.state.nodes.at("n1").link == first);
  CHECK_FALSE(first->closed);
}

TEST_CASE("A report on a rank the node does not hold cuts its stream",
          "[agent_protocol]") {
  Harness harness;
  harness.Register("n1", "1");
  std::shared_ptr<RecordingLink> other = harness.Register("n2", "2");
  JobRuntime& job = harness.RunningJobOn("n1");
  harness.agents.OnAgentMessage(other, harness.RankExit(job, 1, 1));
  CHECK(other->closed);
  CHECK(other->close_status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(harness.core.state.nodes.at("n2").record.state() ==
        v1::NODE_UNREACHABLE);
  CHECK(job.record.state() == v1::RUNNING);
}

TEST_CASE("A rank's exit ends the attempt and is acknowledged once durable",
          "[agent_protocol]") {
  Harness harness;
  std::shared_ptr<RecordingLink> link = harness.Register("n1", "1");
  JobRuntime& job = harness.RunningJobOn("n1");
  const size_t sent_before = link->sent.size();
  harness.agents.OnAgentMessage(link, harness.RankExit(job, 2, 7));
  CHECK(job.record.state() == v1::FAILED);
  CHECK(job.record.exit_code() == 2);
  // Nothing acknowledged before the exit is stored.
  CHECK(link->sent.size() == sent_before);
  REQUIRE(harness.core.Flush());
  REQUIRE(link->sent.size() == sent_before + 1);
  CHECK(link->sent.back().ack().up_to_sequence() == 7);
  CHECK(harness.core.store.Load()->jobs.at(0).state() == v1::FAILED);
}

}  // namespace agent_protocol_test
}  // namespace gantry
