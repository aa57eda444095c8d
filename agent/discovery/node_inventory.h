// Node discovery with hwloc: what a node has (packages, cores, hardware
// threads, NUMA nodes and memory, GPUs, network devices and HCAs).
//
// Reads either this machine or a saved hwloc XML topology (v1 or v2 format),
// so several agents on one host can stand in for different servers. Functions
// are thread-safe (each call owns its own hwloc topology).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/network_roles.h"
#include "common/pci_ids.h"
#include "gantry/v1/types.pb.h"

namespace gantry::agent {

// Both discovery functions also pair each GPU with its nearest OpenFabrics
// device by PCI locality (GpuInfo.nearest_hca / hca_locality, and
// NetworkDevice.gpus): a device behind the same PCIe switch before one under
// the same host bridge, before one on the same NUMA node, before any other;
// then the fewest hops through the I/O tree; then the device serving the
// fewest GPUs so far. They fill NetworkDevice.node_guid where hwloc knows it
// and NetworkDevice.role by AssignNetworkRoles without overrides.

// A GPU's model (GpuInfo.model) is what its compute backend calls it, else
// the pci.ids name hwloc gave its PCI device, else the name `pci_ids` has
// for its vendor and device ids (an XML file written where hwloc had no
// pci.ids), else its bare ids, "PCI 10de:20b0" (common/gpu_type.h). The
// forms without `pci_ids` name GPUs from hwloc alone.

// Discovers this machine. Memory comes from /proc/meminfo (in a VM the NUMA
// node's memory can be far below the real total).
// Errors: INTERNAL when hwloc cannot load the topology.
absl::StatusOr<v1::NodeInventory> DiscoverThisMachine(const PciIds& pci_ids);
absl::StatusOr<v1::NodeInventory> DiscoverThisMachine();

// Discovers the server described by an hwloc XML file.
// Errors: NOT_FOUND for a missing file, INVALID_ARGUMENT when hwloc refuses
// the file (e.g. hwloc 2.9 cannot import XML version 3), with hwloc's reason.
absl::StatusOr<v1::NodeInventory> DiscoverFromHwlocXml(const std::string& path,
                                                       const PciIds& pci_ids);
absl::StatusOr<v1::NodeInventory> DiscoverFromHwlocXml(const std::string& path);

// The distinct models of the inventory's GPUs that nothing could name
// ("PCI 10de:20b0"), in index order: `--gres=gpu:TYPE` cannot pick them.
std::vector<std::string> UnnamedGpuModels(const v1::NodeInventory& inventory);

// What the agent logs once when some GPUs stay unnamed: which, and why
// (`pci_ids` is the database discovery used, or why none was loaded); ""
// when every GPU has a name.
std::string UnnamedGpuNote(const v1::NodeInventory& inventory,
                           const absl::StatusOr<PciIds>& pci_ids);

// The interface of this machine's IPv4 default route (/proc/net/route); ""
// when there is none.
std::string DefaultRouteInterfaceOfThisMachine();

// The inventory's network devices as network_roles.h takes them: RDMA for
// "openfabrics" devices, nearest GPUs from NetworkDevice.gpus, ports from
// HcaPort (ACTIVE, Ethernet = RoCE, GID index), role from the role string.
// Feed it to NcclEnvironment to build a rank's NCCL variables.
std::vector<Nic> NicsOf(const v1::NodeInventory& inventory);

// Sets every NetworkDevice.role (see network_roles.h) from the GPU pairing,
// the interface carrying the default route ("" when unknown: then the first
// plain Ethernet interface is management) and the configured overrides.
void AssignNetworkRoles(const NetworkRoleOverrides& overrides,
                        const std::string& default_route_interface,
                        v1::NodeInventory* inventory);

}  // namespace gantry::agent
