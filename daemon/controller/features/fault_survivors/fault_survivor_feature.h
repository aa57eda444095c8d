// After a node fault, which of the failed attempt's other nodes (its
// survivors) the restart may use. Nodes that fail together are found a
// little apart: a killed agent at once, a frozen one at the node timeout,
// a lost GPU at its next heartbeat, and a second failure may come a moment
// after the first. So a survivor serves the restart only once it has been
// heard from after the fault settled (--node-fault-settle after its first
// sign); until then the restart uses spares and other free nodes, or
// waits, and a job with a node range waits to choose its size (it would
// shrink below what it still has). When the settle time is up the feature
// probes each survivor (a Probe message: "heartbeat now, health checked
// afresh"), so a healthy one is back in a round trip rather than at its
// next beat. A survivor never heard from again and then found dead failed
// with the others: the core drains it (OnNodeDown).
//
// Threading: the controller's loop thread only (controller_feature.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "daemon/controller/core/controller_feature.h"

namespace gantry {

// gantryd's --node-fault-settle, and the agents' heartbeat interval (a node
// found down failed after it was last heard from and before the beat it
// missed).
struct FaultSurvivorSettings {
  int64_t settle_ms = 1000;
  int64_t heartbeat_interval_ms = 1000;
};

class FaultSurvivorFeature : public ControllerFeature {
 public:
  FaultSurvivorFeature(FeatureContext& context,
                       const FaultSurvivorSettings& settings);

  void OnAttemptFailed(const v1::JobRecord& job,
                       bool node_fault_restart) override;
  void LimitPlacement(const v1::JobRecord& job, bool sized_by_range,
                      PlacementLimits& limits) override;
  void OnHeardFrom(const std::string& node) override;
  bool OnNodeDown(const std::string& node, bool was_up) override;
  void OnWake() override;
  void OnJobFinished(const v1::JobRecord& job) override;

 private:
  // A job's last node fault: when it was found (its first sign), and the
  // failed attempt's nodes that were not down then.
  struct JobFault {
    int64_t fault_ms = 0;
    std::vector<std::string> survivors;
  };
  // A survivor not heard from since the fault it survived settled.
  struct SilentSurvivor {
    int64_t fault_ms = 0;  // the latest fault it survived
    bool probed = false;   // asked for a heartbeat since that fault settled
  };

  // Wakes the feature when the next silent survivor's fault has settled.
  void ArmProbe();

  FeatureContext& context_;
  const FaultSurvivorSettings settings_;
  std::map<uint64_t, JobFault> faults_;
  std::map<std::string, SilentSurvivor> silent_;
};

FeatureFactory FaultSurvivorFeatureFactory(
    const FaultSurvivorSettings& settings);

}  // namespace gantry
