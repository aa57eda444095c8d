// Which network each of a node's NICs and HCAs is for, and the NCCL
// environment that follows from it.
//
//   compute     RDMA devices that are the nearest HCA of at least one GPU:
//               what NCCL should use between nodes.
//   storage     other RDMA devices, and Ethernet/IPoIB interfaces that are
//               neither management nor the interface of a compute HCA.
//   management  the interface carrying the default route (else the first
//               plain Ethernet interface): bootstrap and socket traffic.
//
// A configuration may override the role of any device by name. The inputs
// are plain structs (common/ does not depend on the protobuf messages); the
// agent converts its inventory into them.
//
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry {

enum class NetworkRole { kUnassigned, kCompute, kStorage, kManagement };

// "compute", "storage", "management"; "" for kUnassigned.
std::string_view NetworkRoleName(NetworkRole role);
// The inverse, case-insensitive.
// Errors: INVALID_ARGUMENT naming the accepted words.
absl::StatusOr<NetworkRole> ParseNetworkRole(std::string_view name);

// One port of an RDMA device, as far as NCCL cares.
struct NicPort {
  uint32_t port = 1;
  bool active = false;
  bool roce = false;           // Ethernet link layer (RoCE)
  int roce_v2_gid_index = -1;  // -1: none
};

struct Nic {
  std::string name;   // mlx5_0, ib0, eth0
  bool rdma = false;  // an RDMA (verbs / OpenFabrics) device
  // Pairs an interface (ib0, ens1f0np0) with the RDMA device of the same PCI
  // function (mlx5_0); empty when unknown.
  std::string pci_bus_id;
  // GPU indices whose nearest HCA this device is.
  std::vector<uint32_t> nearest_gpus;
  bool default_route = false;  // carries the default route
  bool ipoib = false;          // an IP-over-InfiniBand interface
  // RDMA devices: their ports from libibverbs; empty when not known (then
  // port 1 is assumed usable).
  std::vector<NicPort> ports;
  // Set by ClassifyNics.
  NetworkRole role = NetworkRole::kUnassigned;
};

// Device name -> role, from configuration.
using NetworkRoleOverrides = std::map<std::string, NetworkRole, std::less<>>;

// Sets every Nic's role by the rules in the file comment, then applies
// `overrides` (names of devices absent from `nics` are ignored). An
// interface paired with an RDMA device takes that device's role unless it
// is the management interface. When an override makes some device
// management, no other device is picked as management automatically.
void ClassifyNics(std::vector<Nic>* nics,
                  const NetworkRoleOverrides& overrides);

// The interface of the IPv4 default route in /proc/net/route text (lowest
// metric wins); "" when there is none or the text is not in that format.
std::string DefaultRouteInterface(std::string_view proc_net_route);

// NCCL_IB_HCA for a rank using `gpu_indices` (its GPUs, in its order): the
// compute HCAs nearest to those GPUs, in GPU order, each once, as
// "=mlx5_0:1,mlx5_3:1", one "name:port" per active port (port 1 when the
// ports are unknown; HCAs whose known ports are all down are skipped). With
// no GPUs, or none with a usable compute HCA, all usable compute HCAs in
// device order. "" when there is none (leave the variable unset).
// The leading '=' makes NCCL match names exactly: without it "mlx5_1" also
// selects mlx5_10 and mlx5_11 on a 12-HCA node.
std::string NcclIbHca(const std::vector<Nic>& nics,
                      const std::vector<uint32_t>& gpu_indices);

// NCCL_SOCKET_IFNAME: "=<management interface>" (exact match, for the same
// reason: "eno1" would also match eno12399np0); "" when there is none.
std::string NcclSocketIfname(const std::vector<Nic>& nics);

// NCCL_IB_GID_INDEX: the RoCE v2 GID index shared by the RoCE ports that
// NcclIbHca selects; nullopt when none of them is RoCE, when one has no
// RoCE v2 GID, or when they disagree (NCCL takes a single index; left unset
// it finds each port's own).
std::optional<int> NcclIbGidIndex(const std::vector<Nic>& nics,
                                  const std::vector<uint32_t>& gpu_indices);

// The three variables above that apply, by name.
std::map<std::string, std::string> NcclEnvironment(
    const std::vector<Nic>& nics, const std::vector<uint32_t>& gpu_indices);

}  // namespace gantry
