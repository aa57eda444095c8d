// Node discovery with hwloc: what a node has (packages, cores, hardware
// threads, NUMA nodes and memory, GPUs, network devices and HCAs).
//
// Reads either this machine or a saved hwloc XML topology (v1 or v2 format),
// so several agents on one host can stand in for different servers. Functions
// are thread-safe (each call owns its own hwloc topology).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "gantry/v1/types.pb.h"

namespace gantry::agent {

// Discovers this machine. Memory comes from /proc/meminfo (in a VM the NUMA
// node's memory can be far below the real total).
// Errors: INTERNAL when hwloc cannot load the topology.
absl::StatusOr<v1::NodeInventory> DiscoverThisMachine();

// Discovers the server described by an hwloc XML file.
// Errors: NOT_FOUND for a missing file, INVALID_ARGUMENT when hwloc refuses
// the file (e.g. hwloc 2.9 cannot import XML version 3), with hwloc's reason.
absl::StatusOr<v1::NodeInventory> DiscoverFromHwlocXml(const std::string& path);

}  // namespace gantry::agent
