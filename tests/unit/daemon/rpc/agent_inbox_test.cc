// The inbox between the agents' streams and the controller's loop: when the
// loop is woken, and that it gets every message in order.

#include "daemon/rpc/agent_inbox.h"

#include <catch2/catch.hpp>

namespace gantry {
namespace agent_inbox_test {

class FakeLink final : public AgentLink {
 public:
  void Send(const v1::ControllerMessage&) override {}
  void Close() override {}
  void Close(const absl::Status&) override {}
  std::string Peer() const override { return "fake"; }
};

AgentInbox::Item Heartbeat(const std::shared_ptr<AgentLink>& link,
                           uint32_t running) {
  AgentInbox::Item item;
  item.link = link;
  item.message.mutable_heartbeat()->set_running_ranks(running);
  return item;
}

AgentInbox::Item RankEvent(const std::shared_ptr<AgentLink>& link,
                           uint64_t sequence) {
  AgentInbox::Item item;
  item.link = link;
  item.message.mutable_rank_event()->set_sequence(sequence);
  return item;
}

TEST_CASE("heartbeats wait for a delayed hand-over, other messages wake now") {
  auto link = std::make_shared<FakeLink>();
  AgentInbox inbox;
  CHECK(inbox.Push(Heartbeat(link, 1)) == AgentInbox::Wake::kLater);
  CHECK(inbox.Push(Heartbeat(link, 2)) == AgentInbox::Wake::kNone);
  // A rank event must not wait for the heartbeats' delay.
  CHECK(inbox.Push(RankEvent(link, 7)) == AgentInbox::Wake::kNow);
  CHECK(inbox.Push(Heartbeat(link, 3)) == AgentInbox::Wake::kNone);
  CHECK(inbox.Push(RankEvent(link, 8)) == AgentInbox::Wake::kNone);

  std::vector<AgentInbox::Item> taken = inbox.Take();
  REQUIRE(taken.size() == 5);
  CHECK(taken[0].message.heartbeat().running_ranks() == 1);
  CHECK(taken[1].message.heartbeat().running_ranks() == 2);
  CHECK(taken[2].message.rank_event().sequence() == 7);
  CHECK(taken[3].message.heartbeat().running_ranks() == 3);
  CHECK(taken[4].message.rank_event().sequence() == 8);
  CHECK(inbox.Take().empty());

  // After a hand-over, the next message asks for a wake again.
  CHECK(inbox.Push(Heartbeat(link, 4)) == AgentInbox::Wake::kLater);
  inbox.Take();
  CHECK(inbox.Push(RankEvent(link, 9)) == AgentInbox::Wake::kNow);
}

TEST_CASE("the end of a stream wakes the loop and comes after its messages") {
  auto link = std::make_shared<FakeLink>();
  AgentInbox inbox;
  CHECK(inbox.Push(Heartbeat(link, 1)) == AgentInbox::Wake::kLater);
  AgentInbox::Item ended;
  ended.link = link;
  ended.stream_ended = true;
  CHECK(inbox.Push(std::move(ended)) == AgentInbox::Wake::kNow);
  std::vector<AgentInbox::Item> taken = inbox.Take();
  REQUIRE(taken.size() == 2);
  CHECK_FALSE(taken[0].stream_ended);
  CHECK(taken[1].stream_ended);
  CHECK(taken[1].link == link);
}

TEST_CASE("a registration is not held back") {
  auto link = std::make_shared<FakeLink>();
  AgentInbox inbox;
  AgentInbox::Item reg;
  reg.link = link;
  reg.message.mutable_register_()->set_node_name("node01");
  CHECK(inbox.Push(std::move(reg)) == AgentInbox::Wake::kNow);
}

}  // namespace agent_inbox_test
}  // namespace gantry
