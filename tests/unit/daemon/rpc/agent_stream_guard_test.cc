// The gate of each agent stream: its token bucket, the order of a stream's
// messages, and what makes a single message malformed.

#include "daemon/rpc/agent_stream_guard.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <string>

namespace gantry {
namespace agent_stream_guard_test {

v1::AgentMessage RegisterAs(const std::string& name) {
  v1::AgentMessage message;
  v1::Register& reg = *message.mutable_register_();
  reg.set_node_name(name);
  reg.set_address("10.0.0.1");
  reg.set_boot_id("boot");
  v1::NodeInventory& inventory = *reg.mutable_inventory();
  inventory.set_packages(2);
  inventory.set_cores(64);
  inventory.set_cpus(128);
  inventory.set_numa_nodes(2);
  inventory.set_memory_mb(1 << 20);
  for (uint32_t i = 0; i < 8; ++i) {
    v1::GpuInfo& gpu = *inventory.add_gpus();
    gpu.set_index(i);
    gpu.set_numa_node(static_cast<int32_t>(i / 4));
  }
  v1::NetworkDevice& hca = *inventory.add_network_devices();
  hca.set_name("mlx5_0");
  hca.add_gpus(0);
  hca.add_ports()->set_rate_gbps(400);
  return message;
}

v1::AgentMessage Heartbeat(double load = 1.5) {
  v1::AgentMessage message;
  message.mutable_heartbeat()->set_load_1m(load);
  return message;
}

v1::AgentMessage Exited(int exit_code, int signal = 0) {
  v1::AgentMessage message;
  v1::RankEvent& event = *message.mutable_rank_event();
  event.set_kind(v1::RankEvent::EXITED);
  event.mutable_rank()->set_job_id(7);
  event.mutable_rank()->set_attempt(1);
  event.set_exit_code(exit_code);
  event.set_signal(signal);
  return message;
}

bool Invalid(const v1::AgentMessage& message) {
  return ValidateAgentMessage(message).code() ==
         absl::StatusCode::kInvalidArgument;
}

TEST_CASE("token bucket allows its burst then its rate") {
  TokenBucket bucket(10, 5, 0);
  for (int i = 0; i < 5; ++i) CHECK(bucket.TryTake(0));
  CHECK_FALSE(bucket.TryTake(0));
  // 10 a second: one token per 100 ms.
  CHECK_FALSE(bucket.TryTake(99));
  CHECK(bucket.TryTake(100));
  CHECK_FALSE(bucket.TryTake(100));
  // A long quiet spell refills it to the burst, no more.
  CHECK(bucket.TryTake(60000));
  int taken = 1;
  while (bucket.TryTake(60000)) ++taken;
  CHECK(taken == 5);
  // A clock that steps back takes nothing away and gives nothing.
  CHECK_FALSE(bucket.TryTake(50000));
}

TEST_CASE("stream limits follow the heartbeat interval") {
  AgentStreamLimits limits = AgentStreamLimitsFor(250, 100, 4096);
  CHECK(limits.messages_per_second == Approx(400));
  CHECK(limits.burst == Approx(1000));
  CHECK(limits.max_message_bytes == 4096);
}

TEST_CASE("a flooding stream is refused once its bucket is empty") {
  AgentStreamGuard guard(
      {.messages_per_second = 100, .burst = 50, .max_message_bytes = 1000}, 0);
  int admitted = 0;
  while (guard.Admit(10, 0).ok()) ++admitted;
  CHECK(admitted == 50);
  absl::Status refused = guard.Admit(10, 0);
  CHECK(refused.code() == absl::StatusCode::kResourceExhausted);
  CHECK_THAT(std::string(refused.message()), Catch::Contains("flooding"));
  // A steady 100 a second gets through.
  for (int ms = 10; ms <= 1000; ms += 10) CHECK(guard.Admit(10, ms).ok());
}

TEST_CASE("an oversized message is refused") {
  AgentStreamGuard guard(
      {.messages_per_second = 100, .burst = 50, .max_message_bytes = 1000}, 0);
  CHECK(guard.Admit(1000, 0).ok());
  absl::Status refused = guard.Admit(1001, 0);
  CHECK(refused.code() == absl::StatusCode::kResourceExhausted);
  CHECK_THAT(std::string(refused.message()), Catch::Contains("1001 bytes"));
}

TEST_CASE("a stream must register first and only once") {
  AgentStreamGuard guard({}, 0);
  CHECK(guard.Check(Heartbeat()).code() == absl::StatusCode::kInvalidArgument);

  AgentStreamGuard good({}, 0);
  CHECK(good.Check(RegisterAs("node01")).ok());
  CHECK(good.node_name() == "node01");
  CHECK(good.Check(Heartbeat()).ok());
  CHECK(good.Check(Exited(0)).ok());
  absl::Status renamed = good.Check(RegisterAs("node02"));
  CHECK(renamed.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(renamed.message()),
             Catch::Contains("node02") && Catch::Contains("node01"));
  CHECK(good.Check(RegisterAs("node01")).code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("a registration with absurd or inconsistent values is malformed") {
  CHECK(ValidateAgentMessage(RegisterAs("node01")).ok());
  CHECK(Invalid(RegisterAs("")));
  CHECK(Invalid(RegisterAs("../etc")));
  CHECK(Invalid(RegisterAs(std::string(100, 'a'))));

  v1::AgentMessage message = RegisterAs("node01");
  v1::NodeInventory& inventory =
      *message.mutable_register_()->mutable_inventory();
  inventory.set_cpus(1u << 30);
  CHECK(Invalid(message));
  inventory.set_cpus(32);  // fewer threads than cores
  CHECK(Invalid(message));
  inventory.set_cpus(128);
  inventory.set_memory_mb(uint64_t{1} << 50);
  CHECK(Invalid(message));
  inventory.set_memory_mb(1 << 20);
  inventory.mutable_gpus(3)->set_index(5);  // 5 twice, 3 missing
  CHECK(Invalid(message));
  inventory.mutable_gpus(3)->set_index(3);
  inventory.mutable_network_devices(0)->add_gpus(8);  // no GPU 8
  CHECK(Invalid(message));
  inventory.mutable_network_devices(0)->mutable_gpus()->RemoveLast();
  inventory.mutable_network_devices(0)->mutable_ports(0)->set_rate_gbps(NAN);
  CHECK(Invalid(message));
  inventory.mutable_network_devices(0)->mutable_ports(0)->set_rate_gbps(200);
  CHECK(ValidateAgentMessage(message).ok());
  // Where a GPU sits: a package out of range, a switch name that is no
  // text, or a tree deeper than any real one.
  v1::GpuInfo& gpu = *inventory.mutable_gpus(1);
  gpu.set_package(-2);
  CHECK(Invalid(message));
  gpu.set_package(1);
  gpu.add_pcie_switches("0000:32:00.0");
  gpu.set_host_bridge("0000:[2b-3b]");
  CHECK(ValidateAgentMessage(message).ok());
  gpu.add_pcie_switches("bad\nname");
  CHECK(Invalid(message));
  gpu.mutable_pcie_switches()->RemoveLast();
  for (int i = 0; i < 16; ++i) gpu.add_pcie_switches("0000:2c:00.0");
  CHECK(Invalid(message));
  gpu.clear_pcie_switches();
  CHECK(ValidateAgentMessage(message).ok());
  message.mutable_register_()->set_address(std::string(10000, 'x'));
  CHECK(Invalid(message));
}

TEST_CASE("heartbeats and rank events with absurd values are malformed") {
  CHECK(ValidateAgentMessage(Heartbeat()).ok());
  CHECK(Invalid(Heartbeat(-1)));
  CHECK(Invalid(Heartbeat(INFINITY)));
  v1::AgentMessage problems = Heartbeat();
  for (int i = 0; i < 1000; ++i) {
    problems.mutable_heartbeat()->add_health_problems("GPU 0 gone");
  }
  CHECK(Invalid(problems));

  CHECK(ValidateAgentMessage(Exited(255)).ok());
  CHECK(ValidateAgentMessage(Exited(0, 9)).ok());
  CHECK(Invalid(Exited(-1)));
  CHECK(Invalid(Exited(256)));
  CHECK(Invalid(Exited(0, 1000)));
  v1::AgentMessage no_kind = Exited(0);
  no_kind.mutable_rank_event()->set_kind(v1::RankEvent::KIND_UNSPECIFIED);
  CHECK(Invalid(no_kind));
  v1::AgentMessage job_zero = Exited(0);
  job_zero.mutable_rank_event()->mutable_rank()->set_job_id(0);
  CHECK(Invalid(job_zero));
}

TEST_CASE("a dataset cache report is bounded in entries and string sizes") {
  auto with_entry = [](const std::string& source, const std::string& name) {
    v1::AgentMessage message = Heartbeat();
    v1::CachedDatasetEntry* entry =
        message.mutable_heartbeat()->mutable_dataset_cache()->add_entries();
    entry->set_owner_uid(1000);
    entry->set_source(source);
    entry->set_name(name);
    entry->set_version("3-17");
    entry->set_bytes(1 << 20);
    return message;
  };
  CHECK(ValidateAgentMessage(with_entry("/shared/train", "train")).ok());
  CHECK(Invalid(with_entry(std::string(5000, 'p'), "train")));
  CHECK(Invalid(with_entry("/shared/train", std::string(300, 'n'))));
  v1::AgentMessage many = Heartbeat();
  for (int i = 0; i < 5000; ++i) {
    many.mutable_heartbeat()->mutable_dataset_cache()->add_entries();
  }
  CHECK(Invalid(many));
  v1::AgentMessage reg = RegisterAs("node01");
  *reg.mutable_register_()->mutable_dataset_cache() =
      many.heartbeat().dataset_cache();
  CHECK(Invalid(reg));
}

TEST_CASE("a message of no known kind is malformed") {
  CHECK(Invalid(v1::AgentMessage()));
}

}  // namespace agent_stream_guard_test
}  // namespace gantry
