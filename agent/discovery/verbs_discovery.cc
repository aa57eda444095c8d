// RDMA devices through libibverbs (see verbs_discovery.h).

#include "agent/discovery/verbs_discovery.h"

#include <endian.h>
#include <infiniband/verbs.h>
#include <net/if.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <system_error>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/errno_text.h"
#include "common/log.h"

namespace gantry::agent {
namespace {

std::string Hex64(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%016llx",
                static_cast<unsigned long long>(value));
  return text;
}

bool IsZero(const std::array<uint8_t, 16>& raw) {
  for (uint8_t b : raw) {
    if (b != 0) return false;
  }
  return true;
}

// ::ffff:a.b.c.d
bool IsIpv4Mapped(const std::array<uint8_t, 16>& raw) {
  for (int i = 0; i < 10; ++i) {
    if (raw[i] != 0) return false;
  }
  return raw[10] == 0xff && raw[11] == 0xff;
}

int RoceV2GidIndex(const std::vector<RecordedGid>& gids) {
  int first_v2 = -1;
  for (const RecordedGid& gid : gids) {
    if (gid.type != GidType::kRoceV2 || IsZero(gid.raw)) continue;
    if (IsIpv4Mapped(gid.raw)) return static_cast<int>(gid.index);
    if (first_v2 < 0) first_v2 = static_cast<int>(gid.index);
  }
  return first_v2;
}

std::string StateName(int state) {
  switch (state) {
    case 0:
      return "NOP";
    case 1:
      return "DOWN";
    case 2:
      return "INIT";
    case 3:
      return "ARMED";
    case 4:
      return "ACTIVE";
    case 5:
      return "ACTIVE_DEFER";
    default:
      return "UNKNOWN";
  }
}

// rdma-core 47 added active_speed_ex; older headers (Debian 12 has 44) do
// not have it.
template <typename Attr>
uint32_t SpeedEx(const Attr& attr) {
  if constexpr (requires { attr.active_speed_ex; }) {
    return attr.active_speed_ex;
  } else {
    return 0;
  }
}

// The GID type from sysfs, for kernels without the GID table query.
GidType SysfsGidType(const std::string& device, uint32_t port, uint32_t index) {
  std::ifstream in(absl::StrCat("/sys/class/infiniband/", device, "/ports/",
                                port, "/gid_attrs/types/", index));
  std::string text;
  std::getline(in, text);
  if (text == "RoCE v2") return GidType::kRoceV2;
  if (text.find("RoCE v1") != std::string::npos) return GidType::kRoceV1;
  return GidType::kIb;
}

std::string InterfaceName(uint32_t ifindex) {
  if (ifindex == 0) return "";
  char name[IF_NAMESIZE] = {};
  return if_indextoname(ifindex, name) != nullptr ? std::string(name) : "";
}

struct ContextCloser {
  void operator()(ibv_context* context) const { ibv_close_device(context); }
};
using ContextPtr = std::unique_ptr<ibv_context, ContextCloser>;

GidType TypeOf(uint32_t gid_type) {
  switch (gid_type) {
    case IBV_GID_TYPE_ROCE_V2:
      return GidType::kRoceV2;
    case IBV_GID_TYPE_ROCE_V1:
      return GidType::kRoceV1;
    default:
      return GidType::kIb;
  }
}

// The non-empty GID entries of a port, and the interface of the first one
// that has one.
void ReadGids(ibv_context* context, const std::string& device, uint32_t port,
              int table_length, RecordedPort* out) {
  for (int index = 0; index < table_length; ++index) {
    RecordedGid gid;
    gid.index = static_cast<uint32_t>(index);
    ibv_gid_entry entry = {};
    const int err = ibv_query_gid_ex(context, port, gid.index, &entry, 0);
    if (err == 0) {
      std::copy(std::begin(entry.gid.raw), std::end(entry.gid.raw),
                gid.raw.begin());
      gid.type = TypeOf(entry.gid_type);
      if (out->netdev.empty()) out->netdev = InterfaceName(entry.ndev_ifindex);
    } else if (err == ENODATA) {
      continue;  // an empty entry
    } else {
      // Kernels without the extended query: the GID alone, its type from
      // sysfs.
      ibv_gid raw;
      if (ibv_query_gid(context, static_cast<uint8_t>(port), index, &raw) !=
          0) {
        continue;
      }
      std::copy(std::begin(raw.raw), std::end(raw.raw), gid.raw.begin());
      gid.type = SysfsGidType(device, port, gid.index);
    }
    if (!IsZero(gid.raw)) out->gids.push_back(gid);
  }
}

v1::NetworkDevice DescribeDevice(ibv_device* device) {
  v1::NetworkDevice out;
  const std::string name = ibv_get_device_name(device);
  out.set_name(name);
  out.set_kind("openfabrics");
  out.set_numa_node(-1);
  if (const uint64_t guid = be64toh(ibv_get_device_guid(device)); guid != 0) {
    out.set_node_guid(Hex64(guid));
  }
  ContextPtr context(ibv_open_device(device));
  if (context == nullptr) {
    log::Warn("cannot open RDMA device; reporting it without ports",
              {{"device", name}, {"error", ErrnoText(errno)}});
    return out;
  }
  ibv_device_attr device_attr;
  if (const int err = ibv_query_device(context.get(), &device_attr); err != 0) {
    log::Warn("cannot query RDMA device; reporting it without ports",
              {{"device", name}, {"error", ErrnoText(err)}});
    return out;
  }
  if (out.node_guid().empty() && device_attr.node_guid != 0) {
    out.set_node_guid(Hex64(be64toh(device_attr.node_guid)));
  }
  for (uint32_t port = 1; port <= device_attr.phys_port_cnt; ++port) {
    absl::StatusOr<v1::HcaPort> attributes =
        QueryPort(context.get(), name, port);
    if (!attributes.ok()) {
      log::Warn("cannot query RDMA port",
                {{"device", name},
                 {"port", port},
                 {"error", std::string(attributes.status().message())}});
      continue;
    }
    *out.add_ports() = *std::move(attributes);
  }
  return out;
}

}  // namespace

double LaneRateGbps(uint32_t speed_code) {
  switch (speed_code) {
    case 1:
      return 2.5;  // SDR
    case 2:
      return 5;  // DDR
    case 4:
      return 10;  // QDR
    case 8:
      return 10;  // FDR10 (10.3125 signalling, 64b/66b)
    case 16:
      return 14;  // FDR (14.0625)
    case 32:
      return 25;  // EDR (25.78125)
    case 64:
      return 50;  // HDR (53.125, PAM4)
    case 128:
      return 100;  // NDR (106.25)
    case 256:
      return 200;  // XDR (212.5)
    default:
      return 0;
  }
}

int LaneCount(uint8_t width_code) {
  switch (width_code) {
    case 1:
      return 1;
    case 2:
      return 4;
    case 4:
      return 8;
    case 8:
      return 12;
    case 16:
      return 2;
    default:
      return 0;
  }
}

v1::HcaPort TranslatePortAttributes(const RecordedPort& port) {
  v1::HcaPort out;
  out.set_port(port.port_num);
  out.set_state(StateName(port.state));
  const bool ethernet = port.link_layer == IBV_LINK_LAYER_ETHERNET;
  if (port.link_layer == IBV_LINK_LAYER_UNSPECIFIED ||
      port.link_layer == IBV_LINK_LAYER_INFINIBAND) {
    out.set_link_layer("InfiniBand");
  } else if (ethernet) {
    out.set_link_layer("Ethernet");
  }
  const uint32_t speed =
      port.active_speed_ex != 0 ? port.active_speed_ex : port.active_speed;
  out.set_rate_gbps(LaneRateGbps(speed) * LaneCount(port.active_width));
  out.set_lid(ethernet ? 0 : port.lid);
  for (const RecordedGid& gid : port.gids) {
    if (gid.index != 0) continue;
    uint64_t interface_id = 0;
    for (int i = 8; i < 16; ++i)
      interface_id = (interface_id << 8) | gid.raw[i];
    if (interface_id != 0) out.set_port_guid(Hex64(interface_id));
  }
  out.set_roce_v2_gid_index(ethernet ? RoceV2GidIndex(port.gids) : -1);
  out.set_netdev(port.netdev);
  return out;
}

absl::StatusOr<v1::HcaPort> QueryPort(ibv_context* context,
                                      const std::string& device_name,
                                      uint32_t port) {
  ibv_port_attr attr = {};
  if (const int err =
          ibv_query_port(context, static_cast<uint8_t>(port), &attr);
      err != 0) {
    return absl::UnavailableError(absl::StrCat(
        "ibv_query_port(", device_name, ", ", port, "): ", ErrnoText(err)));
  }
  RecordedPort recorded;
  recorded.port_num = port;
  recorded.state = static_cast<int>(attr.state);
  recorded.link_layer = attr.link_layer;
  recorded.active_width = attr.active_width;
  recorded.active_speed = attr.active_speed;
  recorded.active_speed_ex = SpeedEx(attr);
  recorded.lid = attr.lid;
  ReadGids(context, device_name, port, attr.gid_tbl_len, &recorded);
  return TranslatePortAttributes(recorded);
}

absl::StatusOr<std::vector<v1::NetworkDevice>> DiscoverVerbsDevices() {
  int count = 0;
  ibv_device** list = ibv_get_device_list(&count);
  if (list == nullptr) {
    // errno is only meaningful here: the call does not clear it on success.
    const int err = errno;
    if (err == ENOSYS) return std::vector<v1::NetworkDevice>();
    return absl::UnavailableError(
        absl::StrCat("ibv_get_device_list failed: ", ErrnoText(err)));
  }
  std::vector<v1::NetworkDevice> devices;
  for (int i = 0; i < count; ++i) {
    devices.push_back(DescribeDevice(list[i]));
  }
  ibv_free_device_list(list);
  return devices;
}

void AttachVerbsDevices(const std::vector<v1::NetworkDevice>& verbs_devices,
                        v1::NodeInventory* inventory) {
  for (const v1::NetworkDevice& verbs : verbs_devices) {
    v1::NetworkDevice* target = nullptr;
    for (v1::NetworkDevice& device : *inventory->mutable_network_devices()) {
      if (device.kind() == "openfabrics" && device.name() == verbs.name()) {
        target = &device;
        break;
      }
    }
    if (target == nullptr) {
      target = inventory->add_network_devices();
      target->set_name(verbs.name());
      target->set_kind("openfabrics");
      target->set_numa_node(-1);
    }
    if (!verbs.node_guid().empty()) target->set_node_guid(verbs.node_guid());
    *target->mutable_ports() = verbs.ports();
  }
}

}  // namespace gantry::agent
