#include "agent/link/agent_messages.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <utility>

#include "absl/strings/str_cat.h"

namespace gantry::agent {

v1::RankEvent ExitJournal::Record(v1::RankEvent event) {
  event.set_sequence(next_sequence_++);
  pending_.push_back(event);
  return event;
}

void ExitJournal::Acknowledge(uint64_t up_to_sequence) {
  while (!pending_.empty() && pending_.front().sequence() <= up_to_sequence) {
    pending_.pop_front();
  }
}

std::string NewAgentInstance() {
  std::ifstream in("/proc/sys/kernel/random/uuid");
  std::string id;
  std::getline(in, id);
  if (!id.empty()) return id;
  // No procfs (a chroot): the clock and the pid still differ between two
  // processes of one boot.
  return absl::StrCat(
      "agent-", ::getpid(), "-",
      std::chrono::steady_clock::now().time_since_epoch().count());
}

v1::Register BuildRegister(const AgentIdentity& identity,
                           const v1::NodeInventory& inventory,
                           const ExitJournal& exits,
                           std::vector<v1::RankId> running) {
  v1::Register reg;
  reg.set_node_name(identity.node_name);
  reg.set_address(identity.address);
  reg.set_boot_id(identity.boot_id);
  reg.set_agent_instance(identity.instance);
  reg.set_agent_version(GANTRY_VERSION);
  reg.set_simulated(identity.simulated);
  for (const std::string& feature : identity.features) {
    reg.add_features(feature);
  }
  *reg.mutable_inventory() = inventory;
  for (const v1::RankEvent& event : exits.pending()) {
    *reg.add_unacknowledged_exits() = event;
  }
  for (v1::RankId& rank : running) *reg.add_running() = std::move(rank);
  return reg;
}

v1::AgentMessage RankStartedMessage(const v1::RankId& rank, int32_t pid) {
  v1::AgentMessage message;
  v1::RankEvent& event = *message.mutable_rank_event();
  *event.mutable_rank() = rank;
  event.set_kind(v1::RankEvent::STARTED);
  event.set_pid(pid);
  return message;
}

v1::RankEvent RankEndedEvent(const v1::RankId& rank,
                             const RankOutcome& outcome) {
  v1::RankEvent event;
  *event.mutable_rank() = rank;
  event.set_kind(outcome.launch_failed ? v1::RankEvent::LAUNCH_FAILED
                                       : v1::RankEvent::EXITED);
  event.set_exit_code(outcome.exit_code);
  event.set_signal(outcome.signal);
  event.set_message(outcome.message);
  event.set_out_of_memory(outcome.out_of_memory);
  event.set_node_fault(outcome.node_fault);
  return event;
}

v1::AgentMessage RankEventMessage(const v1::RankEvent& event) {
  v1::AgentMessage message;
  *message.mutable_rank_event() = event;
  return message;
}

v1::AgentMessage HeartbeatMessage(double load_1m, uint32_t running_ranks,
                                  std::vector<std::string> health_problems,
                                  std::vector<v1::NetworkDevice> port_updates) {
  v1::AgentMessage message;
  v1::Heartbeat& heartbeat = *message.mutable_heartbeat();
  heartbeat.set_load_1m(load_1m);
  heartbeat.set_running_ranks(running_ranks);
  for (std::string& problem : health_problems) {
    heartbeat.add_health_problems(std::move(problem));
  }
  for (v1::NetworkDevice& update : port_updates) {
    *heartbeat.add_port_updates() = std::move(update);
  }
  return message;
}

uint32_t HeartbeatIntervalMs(const v1::Registered& registered) {
  return std::max<uint32_t>(50, registered.heartbeat_interval_ms());
}

}  // namespace gantry::agent
