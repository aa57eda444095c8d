// What is wrong with this node right now, for the heartbeat: GPUs that were
// present at start and are gone from the PCI bus, and HCA ports that were
// ACTIVE at start and are not any more (from the verbs port events).
//
// An empty list means healthy. The controller marks a node with problems
// DEGRADED: it places no new work there and restarts the jobs that run on
// it elsewhere.
//
// Thread-safe: Check may be called from any thread.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "agent/discovery/port_watcher.h"
#include "common/mutex.h"
#include "gantry/v1/types.pb.h"

namespace gantry::agent {

class HealthMonitor {
 public:
  // `sysfs_root` is where PCI devices are looked up ("/sys" on a real node;
  // a fake tree in tests). Empty: GPUs are not checked (an agent that
  // describes a saved hwloc topology has no such devices here). `ports` may
  // be null (no HCAs).
  HealthMonitor(const v1::NodeInventory& inventory, std::string sysfs_root,
                std::unique_ptr<PortWatcher> ports);

  // The current problems, each one sentence, in a stable order. Also
  // collects the port changes that TakePortUpdates hands out.
  std::vector<std::string> Check();
  // Ports whose attributes changed since the last call, by device.
  std::vector<v1::NetworkDevice> TakePortUpdates();

 private:
  const std::string sysfs_root_;
  std::vector<std::pair<uint32_t, std::string>> gpus_;  // index, bus id
  std::unique_ptr<PortWatcher> ports_;
  Mutex mutex_;
  // (device, port) -> last known state, for ports ACTIVE at start.
  std::map<std::pair<std::string, uint32_t>, std::string> port_states_
      ABSL_GUARDED_BY(mutex_);
  // Changed ports not yet reported: (device, port) -> new attributes.
  std::map<std::pair<std::string, uint32_t>, v1::HcaPort> changed_
      ABSL_GUARDED_BY(mutex_);
};

}  // namespace gantry::agent
