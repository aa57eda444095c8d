// Where each GPU of a node sits in its PCIe tree and among the CPU
// packages, as hwloc shows it: the PCIe switches above it, its host bridge
// (root complex) and its package (socket). The scheduler packs a one-node
// job's GPUs by these (daemon/scheduler/gpu_choice.h): GPUs behind one
// switch, then under one host bridge, one NUMA node, one package, talk
// faster than GPUs further apart.
//
// Thread-safe as far as the topology is: it only reads it.
#pragma once

#include <hwloc.h>

#include <vector>

#include "gantry/v1/types.pb.h"

namespace gantry::agent {

// Fills GpuInfo.pcie_switches, host_bridge and package of the inventory's
// GPUs; `gpus[i]` is the hwloc object of GPU i (its PCI device, or its OS
// device when it has none; nullptr: unknown). Switches are named by the PCI
// bus id of their upstream port, found as every second bridge below the
// root port (a switch is an upstream port over its downstream ports). A GPU
// whose package hwloc cannot tell (its nearest CPU-side object spans
// several packages) gets -1.
void SetGpuLocality(hwloc_topology_t topology,
                    const std::vector<hwloc_obj_t>& gpus,
                    v1::NodeInventory* inventory);

}  // namespace gantry::agent
