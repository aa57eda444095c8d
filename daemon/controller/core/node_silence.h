// Nodes not heard from in time: each tick, a node past its deadline is
// marked down (node_administration.h), except when most fell silent at
// once (this controller is likelier cut off than most nodes failed in the
// same moment: they get the reconnect grace), and never for time this
// loop itself was stalled (every deadline moves by the stall first).
//
// Threading: the controller's loop only.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "common/clock.h"
#include "daemon/controller/core/allocation_liveness.h"
#include "daemon/controller/core/cluster_state.h"
#include "daemon/controller/core/controller_options.h"
#include "daemon/controller/core/node_administration.h"

namespace gantry {

class NodeSilence {
 public:
  // What it works with; every reference outlives it.
  struct Parts {
    const Clock& clock;
    const ControllerOptions& options;
    ClusterState& state;
    NodeAdministration& nodes;
    // Interactive clients were not listened to during a stall either.
    AllocationLiveness& allocation_liveness;
    int64_t tick_interval_ms;  // how often Check is meant to run
  };
  explicit NodeSilence(Parts parts);

  // The checks begin: a stall is measured from now.
  void Start();
  // One tick's check.
  void Check();

 private:
  Parts parts_;
  int64_t last_check_ms_ = 0;  // monotonic
  // Most agents fell silent at once: those silent then are not marked down
  // before this (monotonic), even once the others are back.
  int64_t mass_silence_until_ms_ = 0;
  std::set<std::string> mass_silence_nodes_;
};

}  // namespace gantry
