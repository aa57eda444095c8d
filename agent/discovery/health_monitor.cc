#include "agent/discovery/health_monitor.h"

#include <filesystem>

#include "absl/strings/str_cat.h"

namespace gantry::agent {

HealthMonitor::HealthMonitor(const v1::NodeInventory& inventory,
                             std::string sysfs_root,
                             std::unique_ptr<PortWatcher> ports)
    : sysfs_root_(std::move(sysfs_root)), ports_(std::move(ports)) {
  for (const v1::GpuInfo& gpu : inventory.gpus()) {
    if (!gpu.pci_bus_id().empty())
      gpus_.push_back({gpu.index(), gpu.pci_bus_id()});
  }
  for (const v1::NetworkDevice& device : inventory.network_devices()) {
    for (const v1::HcaPort& port : device.ports()) {
      if (port.state() == "ACTIVE") {
        port_states_[{device.name(), port.port()}] = "ACTIVE";
      }
    }
  }
}

std::vector<std::string> HealthMonitor::Check() {
  std::vector<std::string> problems;
  if (!sysfs_root_.empty()) {
    for (const auto& [index, bus_id] : gpus_) {
      std::error_code error;
      if (!std::filesystem::exists(sysfs_root_ + "/bus/pci/devices/" + bus_id,
                                   error)) {
        problems.push_back(
            absl::StrCat("GPU ", index, " (", bus_id, ") is gone"));
      }
    }
  }
  MutexLock lock(mutex_);
  if (ports_) {
    for (const PortEvent& event : ports_->TakeEvents()) {
      if (event.now) changed_[{event.device, event.port}] = *event.now;
      auto it = port_states_.find({event.device, event.port});
      if (it == port_states_.end()) continue;  // not ACTIVE at start
      if (event.now) {
        it->second = event.now->state();
      } else if (event.event == "PORT_ERR" || event.event == "DEVICE_FATAL") {
        it->second = "DOWN";
      } else if (event.event == "PORT_ACTIVE") {
        it->second = "ACTIVE";
      }
    }
  }
  for (const auto& [key, state] : port_states_) {
    if (state != "ACTIVE") {
      problems.push_back(absl::StrCat(key.first, " port ", key.second,
                                      " left ACTIVE (now ", state, ")"));
    }
  }
  return problems;
}

std::vector<v1::NetworkDevice> HealthMonitor::TakePortUpdates() {
  MutexLock lock(mutex_);
  std::vector<v1::NetworkDevice> updates;
  for (const auto& [key, port] : changed_) {
    if (updates.empty() || updates.back().name() != key.first) {
      updates.emplace_back().set_name(key.first);
    }
    *updates.back().add_ports() = port;
  }
  changed_.clear();
  return updates;
}

}  // namespace gantry::agent
