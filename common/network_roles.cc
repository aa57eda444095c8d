// Network roles and the NCCL environment (see network_roles.h).

#include "common/network_roles.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/text.h"

namespace gantry {
namespace {

// Ports NCCL may use: the active ones, or port 1 when nothing is known.
std::vector<uint32_t> UsablePorts(const Nic& nic) {
  if (nic.ports.empty()) return {1};
  std::vector<uint32_t> ports;
  for (const NicPort& port : nic.ports) {
    if (port.active) ports.push_back(port.port);
  }
  std::sort(ports.begin(), ports.end());
  return ports;
}

// The compute HCAs for these GPUs (see NcclIbHca), as indices into `nics`.
std::vector<size_t> SelectedHcas(const std::vector<Nic>& nics,
                                 const std::vector<uint32_t>& gpu_indices) {
  const auto usable = [&](size_t i) {
    return nics[i].rdma && nics[i].role == NetworkRole::kCompute &&
           !UsablePorts(nics[i]).empty();
  };
  std::vector<size_t> selected;
  for (uint32_t gpu : gpu_indices) {
    for (size_t i = 0; i < nics.size(); ++i) {
      const std::vector<uint32_t>& near = nics[i].nearest_gpus;
      if (!usable(i) || std::find(near.begin(), near.end(), gpu) == near.end())
        continue;
      if (std::find(selected.begin(), selected.end(), i) == selected.end()) {
        selected.push_back(i);
      }
    }
  }
  if (selected.empty()) {
    for (size_t i = 0; i < nics.size(); ++i) {
      if (usable(i)) selected.push_back(i);
    }
  }
  return selected;
}

bool ParseHex32(std::string_view text, uint32_t* value) {
  if (text.empty() || text.size() > 8) return false;
  uint32_t v = 0;
  for (char c : text) {
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else {
      return false;
    }
    v = (v << 4) | static_cast<uint32_t>(d);
  }
  *value = v;
  return true;
}

std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

}  // namespace

std::string_view NetworkRoleName(NetworkRole role) {
  switch (role) {
    case NetworkRole::kCompute:
      return "compute";
    case NetworkRole::kStorage:
      return "storage";
    case NetworkRole::kManagement:
      return "management";
    case NetworkRole::kUnassigned:
      break;
  }
  return "";
}

absl::StatusOr<NetworkRole> ParseNetworkRole(std::string_view name) {
  const std::string lower = absl::AsciiStrToLower(AsAbsl(name));
  for (NetworkRole role : {NetworkRole::kCompute, NetworkRole::kStorage,
                           NetworkRole::kManagement}) {
    if (lower == NetworkRoleName(role)) return role;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown network role \"", std::string(name),
                   "\" (expected compute, storage or management)"));
}

void ClassifyNics(std::vector<Nic>* nics,
                  const NetworkRoleOverrides& overrides) {
  // RDMA devices first: interfaces may take their role.
  std::map<std::string, NetworkRole> rdma_role_of_function;
  for (Nic& nic : *nics) {
    if (!nic.rdma) continue;
    nic.role = nic.nearest_gpus.empty() ? NetworkRole::kStorage
                                        : NetworkRole::kCompute;
    if (auto it = overrides.find(nic.name); it != overrides.end()) {
      nic.role = it->second;
    }
    if (!nic.pci_bus_id.empty()) {
      rdma_role_of_function.emplace(nic.pci_bus_id, nic.role);
    }
  }

  bool management_overridden = false;
  for (const Nic& nic : *nics) {
    auto it = overrides.find(nic.name);
    management_overridden |=
        it != overrides.end() && it->second == NetworkRole::kManagement;
  }
  const auto paired = [&](const Nic& nic) {
    return !nic.pci_bus_id.empty() &&
           rdma_role_of_function.count(nic.pci_bus_id) != 0;
  };
  Nic* management = nullptr;
  if (!management_overridden) {
    for (Nic& nic : *nics) {
      if (!nic.rdma && nic.default_route) {
        management = &nic;
        break;
      }
    }
    if (management == nullptr) {
      for (Nic& nic : *nics) {
        if (!nic.rdma && !nic.ipoib && !paired(nic)) {
          management = &nic;
          break;
        }
      }
    }
  }
  for (Nic& nic : *nics) {
    if (nic.rdma) continue;
    if (&nic == management) {
      nic.role = NetworkRole::kManagement;
    } else if (paired(nic)) {
      nic.role = rdma_role_of_function.at(nic.pci_bus_id);
      // Only one management interface, and not this one.
      if (nic.role == NetworkRole::kManagement)
        nic.role = NetworkRole::kStorage;
    } else {
      nic.role = NetworkRole::kStorage;
    }
    if (auto it = overrides.find(nic.name); it != overrides.end()) {
      nic.role = it->second;
    }
  }
}

std::string DefaultRouteInterface(std::string_view proc_net_route) {
  std::string best;
  uint32_t best_metric = std::numeric_limits<uint32_t>::max();
  size_t start = 0;
  bool header = true;
  while (start < proc_net_route.size()) {
    size_t end = proc_net_route.find('\n', start);
    if (end == std::string_view::npos) end = proc_net_route.size();
    const std::vector<std::string_view> f =
        Fields(proc_net_route.substr(start, end - start));
    start = end + 1;
    if (header) {  // "Iface Destination Gateway Flags RefCnt Use Metric Mask"
      header = false;
      if (f.size() < 8 || f[0] != "Iface" || f[1] != "Destination" ||
          f[6] != "Metric" || f[7] != "Mask") {
        return "";
      }
      continue;
    }
    if (f.size() < 8) continue;
    uint32_t destination = 0;
    uint32_t flags = 0;
    uint32_t mask = 0;
    if (!ParseHex32(f[1], &destination) || !ParseHex32(f[3], &flags) ||
        !ParseHex32(f[7], &mask)) {
      continue;
    }
    constexpr uint32_t kRouteUp = 0x1;  // RTF_UP
    if (destination != 0 || mask != 0 || (flags & kRouteUp) == 0) continue;
    char* end_metric = nullptr;
    const std::string metric_text(f[6]);
    const unsigned long metric =
        std::strtoul(metric_text.c_str(), &end_metric, 10);
    if (end_metric == metric_text.c_str() || *end_metric != '\0') continue;
    if (best.empty() || metric < best_metric) {
      best = std::string(f[0]);
      best_metric = static_cast<uint32_t>(metric);
    }
  }
  return best;
}

std::string NcclIbHca(const std::vector<Nic>& nics,
                      const std::vector<uint32_t>& gpu_indices) {
  std::vector<std::string> entries;
  for (size_t i : SelectedHcas(nics, gpu_indices)) {
    for (uint32_t port : UsablePorts(nics[i])) {
      entries.push_back(absl::StrCat(nics[i].name, ":", port));
    }
  }
  if (entries.empty()) return "";
  return absl::StrCat("=", absl::StrJoin(entries, ","));
}

std::string NcclSocketIfname(const std::vector<Nic>& nics) {
  for (const Nic& nic : nics) {
    if (nic.role == NetworkRole::kManagement && !nic.rdma) {
      return absl::StrCat("=", nic.name);
    }
  }
  return "";
}

std::optional<int> NcclIbGidIndex(const std::vector<Nic>& nics,
                                  const std::vector<uint32_t>& gpu_indices) {
  std::optional<int> index;
  for (size_t i : SelectedHcas(nics, gpu_indices)) {
    const std::vector<uint32_t> usable = UsablePorts(nics[i]);
    for (const NicPort& port : nics[i].ports) {
      if (!port.roce ||
          std::find(usable.begin(), usable.end(), port.port) == usable.end()) {
        continue;
      }
      if (port.roce_v2_gid_index < 0) return std::nullopt;
      if (index.has_value() && *index != port.roce_v2_gid_index) {
        return std::nullopt;
      }
      index = port.roce_v2_gid_index;
    }
  }
  return index;
}

std::map<std::string, std::string> NcclEnvironment(
    const std::vector<Nic>& nics, const std::vector<uint32_t>& gpu_indices) {
  std::map<std::string, std::string> env;
  if (std::string hca = NcclIbHca(nics, gpu_indices); !hca.empty()) {
    env["NCCL_IB_HCA"] = std::move(hca);
  }
  if (std::string ifname = NcclSocketIfname(nics); !ifname.empty()) {
    env["NCCL_SOCKET_IFNAME"] = std::move(ifname);
  }
  if (std::optional<int> gid = NcclIbGidIndex(nics, gpu_indices)) {
    env["NCCL_IB_GID_INDEX"] = std::to_string(*gid);
  }
  return env;
}

}  // namespace gantry
