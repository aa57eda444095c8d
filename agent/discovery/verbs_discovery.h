// RDMA devices and ports through libibverbs: state, link layer (InfiniBand,
// or Ethernet for RoCE), rate, LID, port and node GUIDs and, on RoCE, the
// RoCE v2 GID index that NCCL needs.
//
// DiscoverVerbsDevices makes the real libibverbs calls; the translation of
// a port's attributes into Gantry's model is the pure function
// TranslatePortAttributes over a RecordedPort, so it can be tested with the
// values real ConnectX ports report. A machine without HCAs (or without the
// RDMA subsystem) has no devices, which is not an error.
//
// All functions are thread-safe: each call opens and closes its own device
// contexts, and the pure functions share nothing.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gantry/v1/types.pb.h"

struct ibv_context;

namespace gantry::agent {

// enum ibv_gid_type.
enum class GidType { kIb = 0, kRoceV1 = 1, kRoceV2 = 2 };

struct RecordedGid {
  uint32_t index = 0;
  std::array<uint8_t, 16> raw{};  // network byte order, as union ibv_gid
  GidType type = GidType::kIb;
};

// The attributes of one port as libibverbs reports them (the fields of
// struct ibv_port_attr that matter here, with the same encodings) and its
// non-empty GID table entries.
struct RecordedPort {
  uint32_t port_num = 1;
  // enum ibv_port_state: 0 NOP, 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE,
  // 5 ACTIVE_DEFER.
  int state = 0;
  // IBV_LINK_LAYER_*: 0 unspecified (old kernels: InfiniBand),
  // 1 InfiniBand, 2 Ethernet.
  uint8_t link_layer = 0;
  // Lanes: 1 -> 1x, 2 -> 4x, 4 -> 8x, 8 -> 12x, 16 -> 2x.
  uint8_t active_width = 0;
  // Per-lane speed: 1 SDR, 2 DDR, 4 QDR, 8 FDR10, 16 FDR, 32 EDR, 64 HDR,
  // 128 NDR.
  uint8_t active_speed = 0;
  // rdma-core 47 and later: the speed when it does not fit active_speed
  // (256 XDR); 0 means use active_speed.
  uint32_t active_speed_ex = 0;
  uint16_t lid = 0;
  std::vector<RecordedGid> gids;
  std::string netdev;  // the Ethernet interface of a RoCE port, if known
};

// The port in Gantry's model:
//   state        "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER", "NOP"
//                ("UNKNOWN" for other values)
//   link_layer   "InfiniBand" or "Ethernet" ("" for unknown values)
//   rate_gbps    lanes x per-lane data rate, as ibstat's "Rate" shows it:
//                SDR 2.5, DDR 5, QDR 10, FDR10 10, FDR 14, EDR 25, HDR 50,
//                NDR 100, XDR 200 Gb/s per lane (the signalling rates are
//                2.5, 5, 10, 10.3125, 14.0625, 25.78125, 53.125, 106.25,
//                212.5; the difference is line coding and FEC), so NDR 4x
//                is 400; 0 for unknown codes
//   lid          InfiniBand only (0 on Ethernet)
//   port_guid    the interface id of GID 0, "0x%016x" ("" without GID 0)
//   roce_v2_gid_index  Ethernet only: the first RoCE v2 GID holding an
//                IPv4-mapped address (::ffff:a.b.c.d), else the first RoCE
//                v2 GID; -1 when there is none, and on InfiniBand
//   netdev       copied
v1::HcaPort TranslatePortAttributes(const RecordedPort& port);

// Per-lane data rate in Gb/s for an active_speed / active_speed_ex code; 0
// for unknown codes.
double LaneRateGbps(uint32_t speed_code);
// Lanes for an active_width code; 0 for unknown codes.
int LaneCount(uint8_t width_code);

// Every RDMA device with its ports, as "openfabrics" NetworkDevices (name,
// node_guid, ports; no PCI or NUMA information: hwloc has that).
// Returns an empty list when ibv_get_device_list finds no device or fails
// with ENOSYS (no RDMA subsystem: a VM or a container without it). A device
// that cannot be opened or queried is listed without ports (and logged).
// Errors: UNAVAILABLE when ibv_get_device_list fails otherwise (the errno
// is named).
absl::StatusOr<std::vector<v1::NetworkDevice>> DiscoverVerbsDevices();

// One port of an open device, read now (PortWatcher uses it after events).
// Errors: UNAVAILABLE when ibv_query_port fails (the errno is named).
absl::StatusOr<v1::HcaPort> QueryPort(ibv_context* context,
                                      const std::string& device_name,
                                      uint32_t port);

// Puts what libibverbs found into an hwloc inventory: each device's ports
// and node GUID go to the "openfabrics" NetworkDevice of the same name
// (mlx5_0); a device hwloc did not list is appended (kind "openfabrics",
// numa_node -1). Other fields are left alone; call AssignNetworkRoles
// (node_inventory.h) afterwards so that appended devices get a role.
void AttachVerbsDevices(const std::vector<v1::NetworkDevice>& verbs_devices,
                        v1::NodeInventory* inventory);

}  // namespace gantry::agent
