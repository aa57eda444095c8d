// After a node fault, which of the failed attempt's other nodes (its
// survivors) the restart may use. Nodes that fail together are found a
// little apart: a killed agent at once, a frozen one at the node timeout,
// a lost GPU at its next heartbeat, and a second failure may come a moment
// after the first. So a survivor serves the restart only once it has been
// heard from after the fault settled (--node-fault-settle after its first
// sign, see NoteNodeFault); until
// then the restart uses spares and other free nodes, or waits. When the
// settle time is up the controller probes each survivor (a Probe message:
// "heartbeat now, health checked afresh"), so a healthy one is back in a
// round trip rather than at its next beat. A survivor never heard from
// again and then found dead failed with the others: it is drained
// (MarkNodeDown). Runs on the controller's loop, like all of Controller.
#include <algorithm>
#include <chrono>
#include <limits>

#include "daemon/controller/controller.h"

namespace gantry {

void Controller::NoteNodeFault(JobRuntime& job) {
  const v1::JobRecord& record = job.record;
  if (record.attempts_size() == 0) return;
  const v1::AttemptRecord& attempt =
      record.attempts(record.attempts_size() - 1);
  // The fault counts from its first sign: a node found down (by its
  // heartbeat timeout, or its stream gone for good) failed after it was
  // last heard from and before the beat it missed, seconds ago; the settle
  // time is measured from that missed beat, so a lone failure found late
  // costs no extra wait. A node found unhealthy (a lost GPU, a port down)
  // is still talking: its fault is now.
  job.node_fault_ms = clock_.NowMs();
  for (const std::string& name : attempt.nodes()) {
    auto node = nodes_.find(name);
    if (node != nodes_.end() && node->second.record.state() == v1::NODE_DOWN) {
      job.node_fault_ms = std::min(job.node_fault_ms,
                                   std::max(node->second.record.last_seen_ms() +
                                                options_.heartbeat_interval_ms,
                                            attempt.start_time_ms()));
    }
  }
  for (const std::string& name : attempt.nodes()) {
    auto node = nodes_.find(name);
    if (node == nodes_.end() || node->second.record.state() == v1::NODE_DOWN) {
      continue;
    }
    job.fault_survivors.push_back(name);
    // Heard from since the fault settled already (found late): alive.
    if (node->second.record.last_seen_ms() >
        job.node_fault_ms + options_.node_fault_settle_ms) {
      continue;
    }
    SilentSurvivor& silent = silent_survivors_[name];
    if (job.node_fault_ms > silent.fault_ms) {
      silent.fault_ms = job.node_fault_ms;
      silent.probed = false;
    }
  }
  ArmSurvivorProbe();
}

void Controller::ExcludeSilentSurvivors(
    const JobRuntime& job, std::vector<std::string>& excluded) const {
  if (job.node_fault_ms == 0) return;
  const int64_t settled_ms = job.node_fault_ms + options_.node_fault_settle_ms;
  for (const std::string& name : job.fault_survivors) {
    auto node = nodes_.find(name);
    if (node != nodes_.end() &&
        node->second.record.last_seen_ms() <= settled_ms) {
      excluded.push_back(name);
    }
  }
}

void Controller::HeardFrom(const std::string& node) {
  auto silent = silent_survivors_.find(node);
  // Heard from once the fault settled (a message in the same millisecond
  // may have been sent before).
  if (silent == silent_survivors_.end() ||
      clock_.NowMs() <=
          silent->second.fault_ms + options_.node_fault_settle_ms) {
    return;
  }
  silent_survivors_.erase(silent);
  RequestSchedule();
}

void Controller::ArmSurvivorProbe() {
  if (stopped_) return;
  int64_t next_ms = std::numeric_limits<int64_t>::max();
  for (const auto& [name, silent] : silent_survivors_) {
    if (!silent.probed) {
      next_ms = std::min(next_ms,
                         silent.fault_ms + options_.node_fault_settle_ms + 1);
    }
  }
  if (next_ms == std::numeric_limits<int64_t>::max()) return;
  survivor_probe_timer_.expires_after(std::chrono::milliseconds(
      std::max<int64_t>(0, next_ms - clock_.NowMs())));
  survivor_probe_timer_.async_wait(
      [this](const boost::system::error_code& error) {
        if (error || stopped_) return;
        ProbeSettledSurvivors();
      });
}

void Controller::ProbeSettledSurvivors() {
  const int64_t now = clock_.NowMs();
  v1::ControllerMessage probe;
  probe.mutable_probe();
  for (auto& [name, silent] : silent_survivors_) {
    if (silent.probed ||
        now <= silent.fault_ms + options_.node_fault_settle_ms) {
      continue;
    }
    silent.probed = true;
    auto node = nodes_.find(name);
    if (node != nodes_.end() && node->second.link) {
      node->second.link->Send(probe);
    }
  }
  ArmSurvivorProbe();
}

}  // namespace gantry
