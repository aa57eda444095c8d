#include "daemon/controller/features/fault_survivors/fault_survivor_feature.h"

#include <algorithm>
#include <limits>
#include <memory>

#include "absl/strings/str_cat.h"

namespace gantry {

FaultSurvivorFeature::FaultSurvivorFeature(
    FeatureContext& context, const FaultSurvivorSettings& settings)
    : context_(context), settings_(settings) {}

void FaultSurvivorFeature::OnAttemptFailed(const v1::JobRecord& job,
                                           bool node_fault_restart) {
  faults_.erase(job.id());
  if (!node_fault_restart || job.attempts_size() == 0) return;
  const v1::AttemptRecord& attempt = job.attempts(job.attempts_size() - 1);
  // The fault counts from its first sign: a node found down (by its
  // heartbeat timeout, or its stream gone for good) failed after it was
  // last heard from and before the beat it missed, seconds ago; the settle
  // time is measured from that missed beat, so a lone failure found late
  // costs no extra wait. A node found unhealthy (a lost GPU, a port down)
  // is still talking: its fault is now.
  int64_t fault_ms = context_.clock().NowMs();
  for (const std::string& name : attempt.nodes()) {
    const v1::NodeRecord* node = context_.FindNode(name);
    if (node != nullptr && node->state() == v1::NODE_DOWN) {
      fault_ms = std::min(
          fault_ms,
          std::max(node->last_seen_ms() + settings_.heartbeat_interval_ms,
                   attempt.start_time_ms()));
    }
  }
  JobFault& fault = faults_[job.id()];
  fault.fault_ms = fault_ms;
  for (const std::string& name : attempt.nodes()) {
    const v1::NodeRecord* node = context_.FindNode(name);
    if (node == nullptr || node->state() == v1::NODE_DOWN) continue;
    fault.survivors.push_back(name);
    // Heard from since the fault settled already (found late): alive.
    if (node->last_seen_ms() > fault_ms + settings_.settle_ms) continue;
    SilentSurvivor& silent = silent_[name];
    if (fault_ms > silent.fault_ms) {
      silent.fault_ms = fault_ms;
      silent.probed = false;
    }
  }
  ArmProbe();
}

void FaultSurvivorFeature::LimitPlacement(const v1::JobRecord& job,
                                          bool sized_by_range,
                                          PlacementLimits& limits) {
  if (faults_.empty()) return;  // the scheduling pass's common case
  auto found = faults_.find(job.id());
  if (found == faults_.end()) return;
  const JobFault& fault = found->second;
  const int64_t settled_ms = fault.fault_ms + settings_.settle_ms;
  for (const std::string& name : fault.survivors) {
    const v1::NodeRecord* node = context_.FindNode(name);
    if (node != nullptr && node->last_seen_ms() <= settled_ms) {
      limits.excluded->push_back(name);
    }
  }
  // A job with a node range is not sized in the moment between the fault
  // and the survivors' next message (their ranks' exits, a heartbeat): a
  // survivor with no ranks of its own is silent until its heartbeat, and
  // the job would shrink below what it still has.
  if (!sized_by_range) return;
  for (const std::string& name : fault.survivors) {
    const v1::NodeRecord* node = context_.FindNode(name);
    if (node == nullptr) continue;
    if (node->last_seen_ms() <= fault.fault_ms &&
        node->state() != v1::NODE_DOWN) {
      limits.held = true;
      limits.reason = "Restarting";
      limits.detail = absl::StrCat("waiting to hear from ", name,
                                   " before choosing the job's size");
      return;
    }
  }
}

void FaultSurvivorFeature::OnHeardFrom(const std::string& node) {
  auto silent = silent_.find(node);
  // Heard from once the fault settled (a message in the same millisecond
  // may have been sent before).
  if (silent == silent_.end() ||
      context_.clock().NowMs() <=
          silent->second.fault_ms + settings_.settle_ms) {
    return;
  }
  silent_.erase(silent);
  context_.RequestSchedule();
}

bool FaultSurvivorFeature::OnNodeDown(const std::string& node,
                                      bool /*was_up*/) {
  // One of a failed attempt's other nodes, silent since that fault and
  // found dead now: it failed with the others, under the job, even though
  // the job restarted without it meanwhile.
  return silent_.erase(node) > 0;
}

void FaultSurvivorFeature::OnWake() {
  const int64_t now = context_.clock().NowMs();
  v1::ControllerMessage probe;
  probe.mutable_probe();
  for (auto& [name, silent] : silent_) {
    if (silent.probed || now <= silent.fault_ms + settings_.settle_ms) {
      continue;
    }
    silent.probed = true;
    context_.SendToNode(name, probe);
  }
  ArmProbe();
}

void FaultSurvivorFeature::OnJobFinished(const v1::JobRecord& job) {
  faults_.erase(job.id());
}

void FaultSurvivorFeature::ArmProbe() {
  int64_t next_ms = std::numeric_limits<int64_t>::max();
  for (const auto& [name, silent] : silent_) {
    if (!silent.probed) {
      next_ms = std::min(next_ms, silent.fault_ms + settings_.settle_ms + 1);
    }
  }
  if (next_ms == std::numeric_limits<int64_t>::max()) return;
  context_.WakeAfter(*this,
                     std::max<int64_t>(0, next_ms - context_.clock().NowMs()));
}

FeatureFactory FaultSurvivorFeatureFactory(
    const FaultSurvivorSettings& settings) {
  return [settings](FeatureContext& context) {
    return std::make_unique<FaultSurvivorFeature>(context, settings);
  };
}

}  // namespace gantry
