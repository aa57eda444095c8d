// The agent's messages, shared by the node agent and the simulated fleet:
// Register contents and order, rank events, heartbeats, and the journal of
// unacknowledged exits.

#include "agent/link/agent_messages.h"

#include <catch2/catch.hpp>

namespace gantry::agent {
namespace agent_messages_test {

v1::RankId Rank(uint64_t job, uint32_t attempt, uint32_t rank) {
  v1::RankId id;
  id.set_job_id(job);
  id.set_attempt(attempt);
  id.set_rank(rank);
  return id;
}

TEST_CASE("the exit journal numbers exits and forgets acknowledged ones") {
  ExitJournal journal;
  RankOutcome outcome;
  outcome.exit_code = 1;
  CHECK(journal.Record(RankEndedEvent(Rank(1, 1, 0), outcome)).sequence() == 1);
  CHECK(journal.Record(RankEndedEvent(Rank(1, 1, 1), outcome)).sequence() == 2);
  CHECK(journal.Record(RankEndedEvent(Rank(2, 1, 0), outcome)).sequence() == 3);
  REQUIRE(journal.pending().size() == 3);
  journal.Acknowledge(2);
  REQUIRE(journal.pending().size() == 1);
  CHECK(journal.pending().front().rank().job_id() == 2);
  journal.Acknowledge(1);  // an old ack changes nothing
  CHECK(journal.pending().size() == 1);
  journal.Acknowledge(10);
  CHECK(journal.pending().empty());
  // Numbers keep rising after acknowledgement.
  CHECK(journal.Record(RankEndedEvent(Rank(3, 1, 0), outcome)).sequence() == 4);
}

TEST_CASE("every agent process gets an instance of its own") {
  const std::string first = NewAgentInstance();
  CHECK_FALSE(first.empty());
  CHECK(NewAgentInstance() != first);
}

TEST_CASE("Register carries identity, inventory, exits and running ranks") {
  AgentIdentity identity{.node_name = "sim00001",
                         .address = "10.0.0.1",
                         .boot_id = "b00t",
                         .instance = "inst-1",
                         .simulated = true,
                         .features = {"a100", "ib"}};
  v1::NodeInventory inventory;
  inventory.set_cpus(32);
  ExitJournal journal;
  RankOutcome outcome;
  outcome.signal = 9;
  journal.Record(RankEndedEvent(Rank(4, 2, 1), outcome));
  v1::Register reg = BuildRegister(identity, inventory, journal,
                                   {Rank(5, 1, 0), Rank(5, 1, 1)});
  CHECK(reg.node_name() == "sim00001");
  CHECK(reg.address() == "10.0.0.1");
  CHECK(reg.boot_id() == "b00t");
  CHECK(reg.agent_instance() == "inst-1");
  CHECK(reg.simulated());
  CHECK(
      std::vector<std::string>(reg.features().begin(), reg.features().end()) ==
      std::vector<std::string>{"a100", "ib"});
  CHECK(reg.agent_version() == GANTRY_VERSION);
  CHECK(reg.inventory().cpus() == 32);
  REQUIRE(reg.unacknowledged_exits_size() == 1);
  CHECK(reg.unacknowledged_exits(0).sequence() == 1);
  CHECK(reg.unacknowledged_exits(0).signal() == 9);
  REQUIRE(reg.running_size() == 2);
  CHECK(reg.running(1).rank() == 1);

  identity.simulated = false;
  CHECK_FALSE(
      BuildRegister(identity, inventory, ExitJournal(), {}).simulated());
}

TEST_CASE("rank events say how the rank ended") {
  v1::AgentMessage started = RankStartedMessage(Rank(1, 1, 3), 4242);
  REQUIRE(started.has_rank_event());
  CHECK(started.rank_event().kind() == v1::RankEvent::STARTED);
  CHECK(started.rank_event().pid() == 4242);
  CHECK(started.rank_event().rank().rank() == 3);
  CHECK(started.rank_event().sequence() == 0);

  RankOutcome failed;
  failed.launch_failed = true;
  failed.message = "no such user";
  v1::RankEvent event = RankEndedEvent(Rank(1, 1, 0), failed);
  CHECK(event.kind() == v1::RankEvent::LAUNCH_FAILED);
  CHECK(event.message() == "no such user");

  RankOutcome oom;
  oom.signal = 9;
  oom.out_of_memory = true;
  event = RankEndedEvent(Rank(1, 1, 0), oom);
  CHECK(event.kind() == v1::RankEvent::EXITED);
  CHECK(event.signal() == 9);
  CHECK(event.out_of_memory());
  CHECK(RankEventMessage(event).rank_event().out_of_memory());
}

TEST_CASE("heartbeats carry load, ranks, problems and port updates") {
  v1::NetworkDevice port;
  port.set_name("mlx5_0");
  v1::AgentMessage message =
      HeartbeatMessage(1.5, 3, {"GPU 2 is gone"}, {port});
  REQUIRE(message.has_heartbeat());
  CHECK(message.heartbeat().load_1m() == 1.5);
  CHECK(message.heartbeat().running_ranks() == 3);
  REQUIRE(message.heartbeat().health_problems_size() == 1);
  CHECK(message.heartbeat().health_problems(0) == "GPU 2 is gone");
  REQUIRE(message.heartbeat().port_updates_size() == 1);
  CHECK(message.heartbeat().port_updates(0).name() == "mlx5_0");
}

TEST_CASE("the heartbeat interval is the controller's, at least 50 ms") {
  v1::Registered registered;
  registered.set_heartbeat_interval_ms(1000);
  CHECK(HeartbeatIntervalMs(registered) == 1000);
  registered.set_heartbeat_interval_ms(10);
  CHECK(HeartbeatIntervalMs(registered) == 50);
  registered.set_heartbeat_interval_ms(0);
  CHECK(HeartbeatIntervalMs(registered) == 50);
}

}  // namespace agent_messages_test
}  // namespace gantry::agent
