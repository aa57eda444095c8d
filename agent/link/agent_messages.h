// What an agent says on the AgentService.Connect stream, built in one place
// for the node agent (agent.h) and the simulated fleet (simulated_fleet.h),
// so that a simulated node speaks exactly as a real one does: the same
// Register, the same rank events, the same heartbeat, the same handling of
// acknowledgements.
//
// Pure functions and one small value class; not thread-safe (callers that
// share an ExitJournal between threads hold their own lock).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "agent/launch/rank_launcher.h"
#include "gantry/v1/agent.pb.h"

namespace gantry::agent {

// Who is registering.
struct AgentIdentity {
  std::string node_name;
  std::string address;  // where other nodes reach this one (MASTER_ADDR)
  std::string boot_id;
  // New for every agent process (NewAgentInstance): a restarted agent has
  // lost the ranks it ran; the same one redialling has not.
  std::string instance;
  // A virtual node of gantry-fleet: its ranks never run.
  bool simulated = false;
  std::vector<std::string> features;  // --features, for --constraint
};

// Rank exits the controller has not acknowledged yet: each gets the next
// sequence number, is sent on the stream, and is carried in every Register
// until an AckRankEvents covers it (exits that happen while the controller
// is away are not lost).
class ExitJournal {
 public:
  // Stamps `event` with the next sequence number (from 1), keeps a copy and
  // returns the stamped event.
  v1::RankEvent Record(v1::RankEvent event);
  // Forgets every event up to and including `up_to_sequence`.
  void Acknowledge(uint64_t up_to_sequence);
  const std::deque<v1::RankEvent>& pending() const { return pending_; }

 private:
  std::deque<v1::RankEvent> pending_;
  uint64_t next_sequence_ = 1;
};

// A fresh random id for this agent process (Register.agent_instance).
std::string NewAgentInstance();

// The first message of a stream. Unacknowledged exits come before running
// ranks: a rank that ends in between shows as running here and its exit
// follows on the stream, rather than being in neither list and looking
// lost.
v1::Register BuildRegister(const AgentIdentity& identity,
                           const v1::NodeInventory& inventory,
                           const ExitJournal& exits,
                           std::vector<v1::RankId> running);

// A rank started (informational: lost if the stream is down). `pid` is 0
// for a simulated rank.
v1::AgentMessage RankStartedMessage(const v1::RankId& rank, int32_t pid);

// A rank ended; not yet stamped (see ExitJournal::Record).
v1::RankEvent RankEndedEvent(const v1::RankId& rank,
                             const RankOutcome& outcome);

v1::AgentMessage RankEventMessage(const v1::RankEvent& event);

v1::AgentMessage HeartbeatMessage(double load_1m, uint32_t running_ranks,
                                  std::vector<std::string> health_problems,
                                  std::vector<v1::NetworkDevice> port_updates);

// The heartbeat period the controller asked for, never below 50 ms.
uint32_t HeartbeatIntervalMs(const v1::Registered& registered);

}  // namespace gantry::agent
