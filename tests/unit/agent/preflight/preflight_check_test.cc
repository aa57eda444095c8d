// The agent's pre-flight pieces that need no peers: the wire header, the
// nccl-tests bus bandwidth line, a bounded command, and a real two-node
// ring over loopback through two listeners (agent/preflight/preflight_check.h).
#include "agent/preflight/preflight_check.h"

#include <catch2/catch.hpp>

#include "agent/preflight/bounded_command.h"
#include "agent/preflight/preflight_wire.h"

namespace gantry::agent {
namespace preflight_check_test {

PreflightNode Node(const std::string& name, PreflightListener* listener,
                   std::vector<std::string> problems = {}) {
  PreflightNode node;
  node.node_name = name;
  node.listener = listener;
  node.health_problems = [problems] { return problems; };
  return node;
}

TEST_CASE("the pre-flight header round-trips and refuses junk") {
  const std::string line =
      FormatPreflightHeader({.token = "00ff", .bytes = 4096});
  CHECK(line == "GPF1 00ff 4096\n");
  absl::StatusOr<PreflightHeader> parsed =
      ParsePreflightHeader(line.substr(0, line.size() - 1));
  REQUIRE(parsed.ok());
  CHECK(parsed->token == "00ff");
  CHECK(parsed->bytes == 4096);
  for (const char* bad :
       {"", "GPF1 00ff", "GPF2 00ff 1", "GPF1 zz 1", "GPF1 00ff -1",
        "GPF1 00ff 99999999999999", "GET / HTTP/1.1"}) {
    CHECK_FALSE(ParsePreflightHeader(bad).ok());
  }
}

TEST_CASE("nccl-tests' average bus bandwidth line is read in MB/s") {
  CHECK(ParseBusBandwidthMbps("#  Out of bounds values : 0 OK\n"
                              "# Avg bus bandwidth    : 180.25 \n#\n") ==
        Approx(180250));
  CHECK(ParseBusBandwidthMbps("nothing here\n") == 0);
  CHECK(ParseBusBandwidthMbps("# Avg bus bandwidth : n/a\n") == 0);
}

TEST_CASE("a bounded command is killed at its deadline with its group") {
  std::atomic<bool> cancelled{false};
  const auto began = std::chrono::steady_clock::now();
  absl::StatusOr<BoundedCommandResult> ran = RunBoundedCommand(
      {"/bin/sh", "-c", "echo started; sleep 30 & sleep 30"},
      CurrentEnvironment(), began + std::chrono::milliseconds(300), cancelled);
  REQUIRE(ran.ok());
  CHECK(ran->timed_out);
  CHECK(ran->output == "started\n");
  CHECK(std::chrono::steady_clock::now() - began < std::chrono::seconds(5));
  absl::StatusOr<BoundedCommandResult> failed = RunBoundedCommand(
      {"/bin/sh", "-c", "echo why >&2; exit 3"}, {},
      std::chrono::steady_clock::now() + std::chrono::seconds(10), cancelled);
  REQUIRE(failed.ok());
  CHECK_FALSE(failed->timed_out);
  CHECK(failed->exit_code == 3);
  CHECK(failed->output == "why\n");
}

TEST_CASE("two agents' checks measure a ring over loopback") {
  auto first = PreflightListener::Start("127.0.0.1", 0);
  auto second = PreflightListener::Start("127.0.0.1", 0);
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  v1::PreflightCheck check;
  check.set_job_id(3);
  check.set_attempt(1);
  check.set_token("abcdef0123");
  check.set_transfer_bytes(1 << 20);
  check.set_timeout_ms(10000);
  check.set_site_command("echo '# Avg bus bandwidth : 2.5'");
  for (const auto* listener : {first->get(), second->get()}) {
    v1::PreflightPeer* peer = check.add_peers();
    peer->set_node(listener == first->get() ? "a" : "b");
    peer->set_address("127.0.0.1");
    peer->set_port(listener->port());
  }
  std::atomic<bool> cancelled{false};
  v1::PreflightResult results[2];
  std::thread other([&] {
    v1::PreflightCheck mine = check;
    mine.set_index(1);
    results[1] = RunPreflightCheck(mine, Node("b", second->get()), cancelled);
  });
  check.set_index(0);
  results[0] = RunPreflightCheck(check, Node("a", first->get()), cancelled);
  other.join();
  for (const v1::PreflightResult& result : results) {
    CHECK(result.passed());
    CHECK(result.send_problem() == "");
    CHECK(result.receive_problem() == "");
    CHECK(result.send_mbps() > 0);
    CHECK(result.receive_mbps() > 0);
    CHECK(result.round_trip_us() > 0);
    CHECK(result.site_mbps() == Approx(2500));
  }
}

TEST_CASE("a peer that never listens fails the send, not the node") {
  auto mine = PreflightListener::Start("127.0.0.1", 0);
  REQUIRE(mine.ok());
  v1::PreflightCheck check;
  check.set_token("77");
  check.set_transfer_bytes(1024);
  check.set_timeout_ms(1000);
  check.set_index(0);
  v1::PreflightPeer* self = check.add_peers();
  self->set_node("a");
  self->set_address("127.0.0.1");
  self->set_port((*mine)->port());
  v1::PreflightPeer* gone = check.add_peers();
  gone->set_node("b");
  gone->set_address("127.0.0.1");
  gone->set_port(1);  // nothing listens there
  std::atomic<bool> cancelled{false};
  const v1::PreflightResult result =
      RunPreflightCheck(check, Node("a", mine->get()), cancelled);
  CHECK(result.passed());
  CHECK_THAT(result.send_problem(), Catch::Contains("connect to 127.0.0.1:1"));
  CHECK_THAT(result.receive_problem(),
             Catch::Contains("nothing arrived from b"));
}

TEST_CASE("an unhealthy node fails its own check") {
  v1::PreflightCheck check;
  check.set_timeout_ms(1000);
  check.add_peers()->set_node("a");
  std::atomic<bool> cancelled{false};
  const v1::PreflightResult result = RunPreflightCheck(
      check, Node("a", nullptr, {"GPU 1 is gone"}), cancelled);
  CHECK_FALSE(result.passed());
  CHECK(result.problem() == "unhealthy: GPU 1 is gone");
}

}  // namespace preflight_check_test
}  // namespace gantry::agent
