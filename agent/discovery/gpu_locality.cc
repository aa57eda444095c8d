// Where each GPU sits (see gpu_locality.h).
#include "agent/discovery/gpu_locality.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace gantry::agent {
namespace {

std::string BusIdOf(hwloc_obj_t bridge) {
  const auto& a = bridge->attr->bridge.upstream.pci;
  char text[32];
  std::snprintf(text, sizeof(text), "%04x:%02x:%02x.%01x",
                static_cast<unsigned>(a.domain), a.bus, a.dev, a.func);
  return text;
}

std::string HostBridgeName(hwloc_obj_t bridge) {
  const auto& d = bridge->attr->bridge.downstream.pci;
  char text[32];
  std::snprintf(text, sizeof(text), "%04x:[%02x-%02x]",
                static_cast<unsigned>(d.domain), d.secondary_bus,
                d.subordinate_bus);
  return text;
}

// The package above the object's nearest CPU-side ancestor; when packages
// hang below it (hwloc v1 files put NUMA nodes above packages), the one
// package its CPUs fall in.
int PackageOf(hwloc_topology_t topology, hwloc_obj_t obj) {
  hwloc_obj_t ancestor = hwloc_get_non_io_ancestor_obj(topology, obj);
  if (ancestor == nullptr) return -1;
  for (hwloc_obj_t cur = ancestor; cur != nullptr; cur = cur->parent) {
    if (cur->type == HWLOC_OBJ_PACKAGE) return static_cast<int>(cur->os_index);
  }
  if (ancestor->cpuset == nullptr || hwloc_bitmap_iszero(ancestor->cpuset)) {
    return -1;
  }
  int found = -1;
  for (hwloc_obj_t package =
           hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_PACKAGE, nullptr);
       package != nullptr; package = hwloc_get_next_obj_by_type(
                               topology, HWLOC_OBJ_PACKAGE, package)) {
    if (package->cpuset == nullptr ||
        !hwloc_bitmap_intersects(package->cpuset, ancestor->cpuset)) {
      continue;
    }
    if (found != -1) return -1;  // spans several packages
    found = static_cast<int>(package->os_index);
  }
  return found;
}

void Locate(hwloc_topology_t topology, hwloc_obj_t gpu, v1::GpuInfo* info) {
  // PCI-PCI bridges from the GPU up to the host bridge, nearest first.
  std::vector<hwloc_obj_t> bridges;
  hwloc_obj_t host = nullptr;
  for (hwloc_obj_t cur = gpu->parent; cur != nullptr; cur = cur->parent) {
    if (cur->type != HWLOC_OBJ_BRIDGE) break;
    if (cur->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST) {
      host = cur;
      break;
    }
    bridges.push_back(cur);
  }
  if (host != nullptr) {
    info->set_host_bridge(HostBridgeName(host));
    // bridges.back() is the root port; above the GPU the chain goes
    // upstream port, downstream port, ... from there. Without a host bridge
    // the chain's top is unknown, so no switch is named.
    for (std::size_t from_top = 1; from_top < bridges.size(); from_top += 2) {
      info->add_pcie_switches(BusIdOf(bridges[bridges.size() - 1 - from_top]));
    }
    // Nearest first.
    std::reverse(info->mutable_pcie_switches()->begin(),
                 info->mutable_pcie_switches()->end());
  }
  info->set_package(PackageOf(topology, gpu));
}

}  // namespace

void SetGpuLocality(hwloc_topology_t topology,
                    const std::vector<hwloc_obj_t>& gpus,
                    v1::NodeInventory* inventory) {
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    v1::GpuInfo* info = inventory->mutable_gpus(static_cast<int>(i));
    if (gpus[i] == nullptr) {
      info->set_package(-1);
      continue;
    }
    Locate(topology, gpus[i], info);
  }
}

}  // namespace gantry::agent
