// gantry-fleet --nodes N: N virtual nodes in one process, for scale tests
// of the controller. Each node (simulated_node.h) has its own stream to
// gantryd, its own name (PREFIX00001, PREFIX00002, ...), the fleet's
// inventory and simulated ranks, and is marked simulated in its Register, so
// `gantry nodes` shows it as such. The controller runs its real code paths
// for them: registration, heartbeats, launch, rank exits, cancel and kill.
//
// The fleet is split into shards, one thread each. A shard owns its nodes,
// a gRPC completion queue that drives all their streams asynchronously, a
// timer heap (heartbeats, rank ends, redials) served by a 10 ms ticker, and
// a gate that limits how many of its nodes dial at once. Nodes are grouped
// onto channels, by default one channel (one TCP connection) per node as
// real agents have.
//
// Thread-safe: Run blocks on one thread; Stop may be called from any other.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "agent/simulated/simulated_node.h"
#include "agent/simulated/simulated_ranks.h"
#include "common/mutex.h"
#include "gantry/v1/types.pb.h"

namespace gantry::agent {

struct SimulatedFleetOptions {
  std::string controller;  // gRPC target
  // MUNGE: each stream carries a credential from munged at munge_socket
  // (empty: the default), as the real agent's does. A fleet whose munged is
  // missing warns once and dials without (enough for gantryd --auth none).
  std::string munge_socket;
  bool use_munge = true;
  std::string address;  // MASTER_ADDR of jobs whose first node is simulated
  uint32_t nodes = 0;
  std::vector<std::string> features;  // every node declares these
  std::string name_prefix = "sim";
  uint32_t first_index = 1;
  SimulatedRankPlan rank_defaults;
  uint32_t threads = 2;
  uint32_t nodes_per_connection = 1;
  // Dials in progress per shard (stream start to Register written).
  uint32_t dials_per_thread = 64;
  // Simulated pre-flight checks (simulated_preflight.h).
  std::string preflight_plan_path;
  uint32_t preflight_ms = 200;
};

// INVALID_ARGUMENT unless the options make valid node names (the
// controller's rule: a letter or digit, then letters, digits, '.', '_', '-',
// at most 63 characters) and sensible counts.
absl::Status CheckSimulatedFleetOptions(const SimulatedFleetOptions& options);

// PREFIX + the index, zero-padded to 5 digits or to the width of the
// largest index of the fleet (sim00001 ... sim10000; sim000001 when the
// fleet reaches 100000).
std::string SimulatedNodeName(const std::string& prefix, uint32_t index,
                              uint32_t width);
// The width every name of a fleet from `first` with `count` nodes uses.
uint32_t SimulatedNameWidth(uint32_t first, uint32_t count);

// The inventory of simulated nodes given no --topology: a fixed,
// small GPU server (1 socket, 16 cores, 32 CPUs, 128 GiB, 8 GPUs, one
// Ethernet port), the same everywhere, so a fleet needs no file to start.
v1::NodeInventory SyntheticNodeInventory();

class SimulatedFleet {
 public:
  SimulatedFleet(SimulatedFleetOptions options, v1::NodeInventory inventory);
  ~SimulatedFleet();
  SimulatedFleet(const SimulatedFleet&) = delete;
  SimulatedFleet& operator=(const SimulatedFleet&) = delete;

  // Connects every node and serves them until Stop; logs a summary line
  // (nodes connected, streams ended) when it changes, at most every 5 s.
  void Run();
  // Ends every stream and makes Run return. Thread-safe.
  void Stop();

  // Counters and logs shared by the shards (simulated_fleet.cc).
  class Census;

 private:
  class Shard;

  const SimulatedFleetOptions options_;
  SimulatedNodeShared shared_;
  GangStartLog gang_starts_;
  std::unique_ptr<Census> census_;
  std::vector<std::unique_ptr<Shard>> shards_;

  Mutex mutex_;
  CondVar wake_;
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
};

}  // namespace gantry::agent
