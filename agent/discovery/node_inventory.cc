// Node discovery with hwloc (see node_inventory.h).
//
// GPUs are recognised from PCI devices first: Debian's hwloc has no CUDA,
// NVML or RSMI plugin, so on a real node a GPU may have no OS device at all,
// and a file written elsewhere may have several (cuda0, nvml0, opencl0d0,
// card0, rsmi0...) under the same PCI device. Compute OS devices only count on
// their own when no PCI device of a known GPU vendor stands above them.

#include "agent/discovery/node_inventory.h"

#include <hwloc.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/discovery/gpu_locality.h"
#include "common/errno_text.h"
#include "common/gpu_type.h"
#include "common/ibnetdiscover_parser.h"

namespace gantry::agent {
namespace {

constexpr unsigned kVendorNvidia = 0x10de;
constexpr unsigned kVendorAmd = 0x1002;
constexpr unsigned kVendorIntel = 0x8086;
// Board-management VGA chips: display class, never a compute GPU.
constexpr unsigned kVendorAspeed = 0x1a03;
constexpr unsigned kVendorMatrox = 0x102b;

constexpr unsigned kClassBaseDisplay = 0x03;      // 0300 VGA, 0302 3D, 0380
constexpr unsigned kClassBaseAccelerator = 0x12;  // 1200 processing accel.
constexpr unsigned kClass3dController = 0x0302;
constexpr unsigned kClassDisplayOther = 0x0380;

struct TopologyDeleter {
  void operator()(hwloc_topology_t topology) const {
    hwloc_topology_destroy(topology);
  }
};
using TopologyPtr =
    std::unique_ptr<std::remove_pointer_t<hwloc_topology_t>, TopologyDeleter>;

// A topology that keeps GPUs, NICs and their OS devices: hwloc drops all I/O
// objects by default, from XML files too.
absl::StatusOr<TopologyPtr> NewTopology() {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) {
    return absl::InternalError(
        absl::StrCat("hwloc_topology_init failed: ", ErrnoText(errno)));
  }
  TopologyPtr topology(raw);
  if (hwloc_topology_set_io_types_filter(
          raw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) != 0) {
    return absl::InternalError(absl::StrCat(
        "hwloc_topology_set_io_types_filter failed: ", ErrnoText(errno)));
  }
  return topology;
}

// Version string of a file's <topology> root ("2.0", "3.0"; "1.x" when it
// has none, as v1 files do), to explain why hwloc refused it.
std::string SniffXmlVersion(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  const size_t root = head.find("<topology");
  if (root == std::string::npos) return "";
  const size_t end = head.find('>', root);
  const std::string_view tag = std::string_view(head).substr(
      root, end == std::string::npos ? std::string::npos : end - root);
  constexpr std::string_view kAttr = "version=\"";
  const size_t at = tag.find(kAttr);
  if (at == std::string_view::npos) return "1.x";
  const size_t start = at + kAttr.size();
  const size_t quote = tag.find('"', start);
  if (quote == std::string_view::npos) return "";
  return std::string(tag.substr(start, quote - start));
}

std::string HwlocRefusal(const std::string& path, const char* step, int err) {
  std::string message = absl::StrCat("hwloc refused ", path, " (", step, ": ",
                                     ErrnoText(err), ")");
  const std::string version = SniffXmlVersion(path);
  if (version.empty()) {
    absl::StrAppend(&message, "; no <topology> root found: not hwloc XML?");
  } else if (version != "1.x" && version.front() >= '3') {
    absl::StrAppend(&message, "; hwloc ", HWLOC_API_VERSION >> 16, ".x",
                    " cannot import XML version ", version,
                    " (written by hwloc 3 or later): export it again in the "
                    "v2 format");
  }
  return message;
}

std::optional<uint64_t> MemTotalMbFromProc() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemTotal:") return kib / 1024;
  }
  return std::nullopt;
}

// Nearest NUMA node (os_index) of an object, from the nodeset of its first
// non-I/O ancestor. When that ancestor spans several nodes (a package in
// SNC mode), the first node with CPUs is as near as hwloc can tell; at the
// root of a multi-node machine the locality is unknown (-1).
int NearestNumaNode(hwloc_topology_t topology, hwloc_obj_t obj) {
  hwloc_obj_t ancestor = hwloc_get_non_io_ancestor_obj(topology, obj);
  if (ancestor == nullptr || ancestor->nodeset == nullptr) return -1;
  if (hwloc_bitmap_weight(ancestor->nodeset) == 1) {
    return hwloc_bitmap_first(ancestor->nodeset);
  }
  std::vector<int> with_cpus;
  std::vector<int> all;
  for (hwloc_obj_t node =
           hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, nullptr);
       node != nullptr;
       node = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, node)) {
    if (!hwloc_bitmap_isset(ancestor->nodeset, node->os_index)) continue;
    const int id = static_cast<int>(node->os_index);
    all.push_back(id);
    if (node->cpuset != nullptr && !hwloc_bitmap_iszero(node->cpuset)) {
      with_cpus.push_back(id);
    }
  }
  const std::vector<int>& candidates = with_cpus.empty() ? all : with_cpus;
  if (candidates.empty()) return -1;
  if (ancestor->parent == nullptr && candidates.size() > 1) return -1;
  return *std::min_element(candidates.begin(), candidates.end());
}

hwloc_obj_t PciAncestor(hwloc_obj_t obj) {
  for (hwloc_obj_t cur = obj->parent; cur != nullptr; cur = cur->parent) {
    if (cur->type == HWLOC_OBJ_PCI_DEVICE) return cur;
    if (cur->type != HWLOC_OBJ_BRIDGE && cur->type != HWLOC_OBJ_OS_DEVICE) {
      break;
    }
  }
  return nullptr;
}

using PciAddress = std::tuple<unsigned, unsigned, unsigned, unsigned>;

PciAddress AddressOf(hwloc_obj_t pcidev) {
  const auto& a = pcidev->attr->pcidev;
  return {a.domain, a.bus, a.dev, a.func};
}

std::string PciBusId(hwloc_obj_t pcidev) {
  const auto& a = pcidev->attr->pcidev;
  char text[32];
  std::snprintf(text, sizeof(text), "%04x:%02x:%02x.%01x",
                static_cast<unsigned>(a.domain), a.bus, a.dev, a.func);
  return text;
}

std::string VendorName(unsigned vendor_id) {
  switch (vendor_id) {
    case kVendorNvidia:
      return "NVIDIA";
    case kVendorAmd:
      return "AMD";
    case kVendorIntel:
      return "Intel";
    default:
      return "";
  }
}

std::string InfoOrEmpty(hwloc_obj_t obj, const char* name) {
  const char* value = hwloc_obj_get_info_by_name(obj, name);
  return value == nullptr ? std::string() : std::string(value);
}

bool Contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// What a display/accelerator-class PCI device from a known vendor is.
enum class PciGpuVerdict {
  kNotGpuClass,  // not display/accelerator class, or unknown vendor
  kGpu,
  kRejected,  // BMC VGA, Intel integrated graphics, virtual function
};

bool IsGpuClass(unsigned class_id) {
  const unsigned base = class_id >> 8;
  return base == kClassBaseDisplay || base == kClassBaseAccelerator;
}

PciGpuVerdict ClassifyPciDevice(hwloc_obj_t pcidev) {
  const auto& a = pcidev->attr->pcidev;
  if (!IsGpuClass(a.class_id)) return PciGpuVerdict::kNotGpuClass;
  switch (a.vendor_id) {
    case kVendorNvidia:
    case kVendorAmd:
      break;
    case kVendorIntel:
      // Integrated graphics is plain VGA (0300); data-center GPUs are 0380.
      if (a.class_id != kClassDisplayOther &&
          a.class_id != kClass3dController) {
        return PciGpuVerdict::kRejected;
      }
      break;
    case kVendorAspeed:
    case kVendorMatrox:
      return PciGpuVerdict::kRejected;
    default:
      return PciGpuVerdict::kNotGpuClass;
  }
  if (Contains(InfoOrEmpty(pcidev, "PCIDevice"), "Virtual Function")) {
    return PciGpuVerdict::kRejected;
  }
  return PciGpuVerdict::kGpu;
}

// Compute-capable OS device families, in the order preferred when the same
// GPUs are listed by several backends without a PCI device above them.
enum class GpuFamily { kNvml, kCuda, kRsmi, kLevelZero, kOpenCl, kNone };

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// DRM devices (card0, renderD128, controlD64) exist for any display adapter,
// a BMC's VGA included, so they never count as a GPU on their own.
GpuFamily FamilyOf(hwloc_obj_t osdev) {
  if (osdev->attr->osdev.type != HWLOC_OBJ_OSDEV_GPU &&
      osdev->attr->osdev.type != HWLOC_OBJ_OSDEV_COPROC) {
    return GpuFamily::kNone;
  }
  const std::string_view name = osdev->name ? osdev->name : "";
  std::string_view kind = osdev->subtype ? osdev->subtype : "";
  const std::string backend = InfoOrEmpty(osdev, "Backend");
  const std::string coproc = InfoOrEmpty(osdev, "CoProcType");
  if (kind.empty()) kind = !backend.empty() ? backend : coproc;
  if (kind == "NVML" || (kind.empty() && StartsWith(name, "nvml"))) {
    return GpuFamily::kNvml;
  }
  if (kind == "CUDA" || (kind.empty() && StartsWith(name, "cuda"))) {
    return GpuFamily::kCuda;
  }
  if (kind == "RSMI" || (kind.empty() && StartsWith(name, "rsmi"))) {
    return GpuFamily::kRsmi;
  }
  if (kind == "LevelZero" || (kind.empty() && StartsWith(name, "ze"))) {
    return GpuFamily::kLevelZero;
  }
  if (kind == "OpenCL" || (kind.empty() && StartsWith(name, "opencl"))) {
    if (InfoOrEmpty(osdev, "OpenCLDeviceType") == "CPU")
      return GpuFamily::kNone;
    return GpuFamily::kOpenCl;
  }
  return GpuFamily::kNone;
}

std::string VendorFromOsDevice(hwloc_obj_t osdev, GpuFamily family) {
  std::string vendor = InfoOrEmpty(osdev, "GPUVendor");
  if (Contains(vendor, "NVIDIA")) return "NVIDIA";
  if (Contains(vendor, "AMD") || Contains(vendor, "Advanced Micro Devices")) {
    return "AMD";
  }
  if (Contains(vendor, "Intel")) return "Intel";
  switch (family) {
    case GpuFamily::kNvml:
    case GpuFamily::kCuda:
      return "NVIDIA";
    case GpuFamily::kRsmi:
      return "AMD";
    case GpuFamily::kLevelZero:
      return "Intel";
    default:
      return vendor;
  }
}

// Trailing number of an OS device name (nvml12 -> 12) to order devices.
unsigned long NameNumber(const char* name) {
  if (name == nullptr) return 0;
  const char* end = name + std::strlen(name);
  const char* digits = end;
  while (digits > name && digits[-1] >= '0' && digits[-1] <= '9') --digits;
  return digits == end ? 0 : std::strtoul(digits, nullptr, 10);
}

// The model reported by a compute backend is the marketing name; the PCI
// name (from pci.ids, as hwloc looked it up) is the fallback, e.g. for files
// with DRM devices only; then the agent's own look-up in pci.ids, for files
// written where hwloc had no names; last the PCI ids themselves.
std::string ModelOf(hwloc_obj_t pcidev, const PciIds& pci_ids) {
  for (hwloc_obj_t child = pcidev->io_first_child; child != nullptr;
       child = child->next_sibling) {
    if (child->type != HWLOC_OBJ_OS_DEVICE) continue;
    std::string model = InfoOrEmpty(child, "GPUModel");
    if (!model.empty()) return model;
  }
  std::string model = InfoOrEmpty(pcidev, "PCIDevice");
  if (!model.empty()) return model;
  const auto& a = pcidev->attr->pcidev;
  if (std::optional<std::string> name =
          pci_ids.DeviceName(a.vendor_id, a.device_id)) {
    return *std::move(name);
  }
  return UnnamedGpuModel(a.vendor_id, a.device_id);
}

struct FoundGpu {
  std::optional<PciAddress> address;  // none: OS device without a PCI parent
  unsigned long order = 0;
  hwloc_obj_t object = nullptr;  // the PCI device, or the OS device
  v1::GpuInfo info;
};

// Adds the GPUs in index order and returns their hwloc objects, by index.
std::vector<hwloc_obj_t> AddGpus(hwloc_topology_t topology,
                                 const PciIds& pci_ids,
                                 v1::NodeInventory* inventory) {
  std::vector<FoundGpu> found;

  // PCI devices of the GPU vendors. A further function of the same slot with
  // the same vendor and class is a virtual function, not another GPU.
  using Slot = std::tuple<unsigned, unsigned, unsigned, unsigned, unsigned>;
  const auto slot_of = [](hwloc_obj_t dev) -> Slot {
    const auto& a = dev->attr->pcidev;
    return {a.domain, a.bus, a.dev, a.vendor_id, a.class_id};
  };
  std::vector<hwloc_obj_t> gpu_devices;
  std::map<Slot, unsigned> first_function;
  for (hwloc_obj_t dev = hwloc_get_next_pcidev(topology, nullptr);
       dev != nullptr; dev = hwloc_get_next_pcidev(topology, dev)) {
    if (ClassifyPciDevice(dev) != PciGpuVerdict::kGpu) continue;
    gpu_devices.push_back(dev);
    const unsigned func = dev->attr->pcidev.func;
    auto [it, inserted] = first_function.emplace(slot_of(dev), func);
    if (!inserted) it->second = std::min(it->second, func);
  }
  for (hwloc_obj_t dev : gpu_devices) {
    const auto& a = dev->attr->pcidev;
    if (first_function.at(slot_of(dev)) != a.func) continue;
    FoundGpu gpu;
    gpu.address = AddressOf(dev);
    gpu.object = dev;
    gpu.info.set_vendor(VendorName(a.vendor_id));
    gpu.info.set_model(ModelOf(dev, pci_ids));
    gpu.info.set_pci_bus_id(PciBusId(dev));
    gpu.info.set_numa_node(NearestNumaNode(topology, dev));
    found.push_back(std::move(gpu));
  }

  // Compute OS devices not under a PCI device of a known GPU vendor: one GPU
  // per PCI device they hang from, or, with no PCI parent at all, the devices
  // of one backend family (the same GPUs may be listed by several).
  std::map<PciAddress, hwloc_obj_t> under_other_pci;
  std::map<GpuFamily, std::vector<hwloc_obj_t>> parentless;
  for (hwloc_obj_t osdev = hwloc_get_next_osdev(topology, nullptr);
       osdev != nullptr; osdev = hwloc_get_next_osdev(topology, osdev)) {
    const GpuFamily family = FamilyOf(osdev);
    if (family == GpuFamily::kNone) continue;
    hwloc_obj_t pci = PciAncestor(osdev);
    if (pci == nullptr) {
      parentless[family].push_back(osdev);
    } else if (ClassifyPciDevice(pci) == PciGpuVerdict::kNotGpuClass) {
      under_other_pci.emplace(AddressOf(pci), osdev);
    }
  }
  for (const auto& [address, osdev] : under_other_pci) {
    hwloc_obj_t pci = PciAncestor(osdev);
    FoundGpu gpu;
    gpu.address = address;
    gpu.object = pci;
    gpu.info.set_vendor(VendorFromOsDevice(osdev, FamilyOf(osdev)));
    gpu.info.set_model(ModelOf(pci, pci_ids));
    gpu.info.set_pci_bus_id(PciBusId(pci));
    gpu.info.set_numa_node(NearestNumaNode(topology, pci));
    found.push_back(std::move(gpu));
  }
  if (!parentless.empty()) {
    const auto& [family, devices] = *parentless.begin();
    for (hwloc_obj_t osdev : devices) {
      FoundGpu gpu;
      gpu.order = NameNumber(osdev->name);
      gpu.object = osdev;
      gpu.info.set_vendor(VendorFromOsDevice(osdev, family));
      gpu.info.set_model(InfoOrEmpty(osdev, "GPUModel"));
      gpu.info.set_numa_node(NearestNumaNode(topology, osdev));
      found.push_back(std::move(gpu));
    }
  }

  // Index order: PCI bus id, then devices without one by their number.
  std::stable_sort(found.begin(), found.end(),
                   [](const FoundGpu& x, const FoundGpu& y) {
                     if (x.address.has_value() != y.address.has_value()) {
                       return x.address.has_value();
                     }
                     if (x.address.has_value()) return *x.address < *y.address;
                     return x.order < y.order;
                   });
  uint32_t index = 0;
  std::vector<hwloc_obj_t> objects;
  for (FoundGpu& gpu : found) {
    gpu.info.set_index(index++);
    *inventory->add_gpus() = std::move(gpu.info);
    objects.push_back(gpu.object);
  }
  return objects;
}

// Adds the network and OpenFabrics devices and returns, for each OpenFabrics
// one, its index in network_devices and the object that places it (its PCI
// device, or the OS device itself when it has none).
std::vector<std::pair<int, hwloc_obj_t>> AddNetworkDevices(
    hwloc_topology_t topology, v1::NodeInventory* inventory) {
  std::vector<std::pair<int, hwloc_obj_t>> hcas;
  for (hwloc_obj_t osdev = hwloc_get_next_osdev(topology, nullptr);
       osdev != nullptr; osdev = hwloc_get_next_osdev(topology, osdev)) {
    const hwloc_obj_osdev_type_t type = osdev->attr->osdev.type;
    if (type != HWLOC_OBJ_OSDEV_NETWORK &&
        type != HWLOC_OBJ_OSDEV_OPENFABRICS) {
      continue;
    }
    v1::NetworkDevice* device = inventory->add_network_devices();
    device->set_name(osdev->name ? osdev->name : "");
    device->set_kind(type == HWLOC_OBJ_OSDEV_NETWORK ? "network"
                                                     : "openfabrics");
    hwloc_obj_t pci = PciAncestor(osdev);
    if (pci != nullptr) device->set_pci_bus_id(PciBusId(pci));
    device->set_numa_node(NearestNumaNode(topology, osdev));
    if (type == HWLOC_OBJ_OSDEV_OPENFABRICS) {
      const std::string guid = InfoOrEmpty(osdev, "NodeGUID");
      if (absl::StatusOr<uint64_t> parsed = ParseGuid(guid); parsed.ok()) {
        device->set_node_guid(FormatGuid(*parsed));
      }
      hcas.emplace_back(inventory->network_devices_size() - 1,
                        pci != nullptr ? pci : osdev);
    }
  }
  return hcas;
}

// How near two devices are in the I/O tree: the closer of the ranks below
// first, then the fewer parent hops from each to their common ancestor.
// hwloc_get_common_ancestor_obj compares depths, which I/O objects do not
// have (they are negative and special), so the ancestors are walked here.
struct Nearness {
  int rank = 0;  // index into kLocalityNames
  int hops = 0;
  bool operator<(const Nearness& other) const {
    return std::tie(rank, hops) < std::tie(other.rank, other.hops);
  }
};
constexpr const char* kLocalityNames[] = {"pcie-switch", "host-bridge", "numa",
                                          "system"};

Nearness NearnessOf(hwloc_obj_t a, hwloc_obj_t b) {
  std::vector<hwloc_obj_t> chain;
  for (hwloc_obj_t cur = a; cur != nullptr; cur = cur->parent) {
    chain.push_back(cur);
  }
  int hops_b = 0;
  hwloc_obj_t common = b;
  auto at = chain.end();
  for (; common != nullptr; common = common->parent, ++hops_b) {
    at = std::find(chain.begin(), chain.end(), common);
    if (at != chain.end()) break;
  }
  Nearness n;
  if (common == nullptr) {  // different topologies: cannot happen
    n.rank = 3;
    return n;
  }
  n.hops = static_cast<int>(at - chain.begin()) + hops_b;
  switch (common->type) {
    case HWLOC_OBJ_BRIDGE:
      n.rank = common->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST
                   ? 1   // the host bridge (root complex)
                   : 0;  // a PCI bridge below it: a PCIe switch
      break;
    case HWLOC_OBJ_PCI_DEVICE:
    case HWLOC_OBJ_OS_DEVICE:
      n.rank = 0;  // functions of one device
      break;
    default:
      // CPU side: one NUMA node in common, or more than one.
      n.rank = common->nodeset != nullptr &&
                       hwloc_bitmap_weight(common->nodeset) == 1
                   ? 2
                   : 3;
  }
  return n;
}

// Pairs each GPU with its nearest OpenFabrics device. Among devices equally
// near, the one serving the fewest GPUs so far is taken (a dual-port HCA
// near two GPUs gives each a port), then the first listed.
void PairGpusWithHcas(const std::vector<hwloc_obj_t>& gpus,
                      const std::vector<std::pair<int, hwloc_obj_t>>& hcas,
                      v1::NodeInventory* inventory) {
  if (hcas.empty()) return;
  std::vector<int> served(hcas.size(), 0);
  for (size_t g = 0; g < gpus.size(); ++g) {
    if (gpus[g] == nullptr) continue;
    size_t best = 0;
    Nearness best_nearness;
    for (size_t h = 0; h < hcas.size(); ++h) {
      const Nearness n = NearnessOf(gpus[g], hcas[h].second);
      if (h == 0 || n < best_nearness ||
          (!(best_nearness < n) && served[h] < served[best])) {
        best = h;
        best_nearness = n;
      }
    }
    ++served[best];
    v1::NetworkDevice* hca =
        inventory->mutable_network_devices(hcas[best].first);
    v1::GpuInfo* gpu = inventory->mutable_gpus(static_cast<int>(g));
    gpu->set_nearest_hca(hca->name());
    gpu->set_hca_locality(kLocalityNames[best_nearness.rank]);
    hca->add_gpus(gpu->index());
  }
}

uint32_t CountOf(hwloc_topology_t topology, hwloc_obj_type_t type) {
  const int n = hwloc_get_nbobjs_by_type(topology, type);
  return n > 0 ? static_cast<uint32_t>(n) : 0;
}

// Everything but memory, which depends on where the topology came from.
v1::NodeInventory Summarize(hwloc_topology_t topology, std::string source,
                            const PciIds& pci_ids) {
  v1::NodeInventory inventory;
  const uint32_t pus = CountOf(topology, HWLOC_OBJ_PU);
  const uint32_t cores = CountOf(topology, HWLOC_OBJ_CORE);
  const uint32_t packages = CountOf(topology, HWLOC_OBJ_PACKAGE);
  const uint32_t numa_nodes = CountOf(topology, HWLOC_OBJ_NUMANODE);
  inventory.set_cpus(pus);
  inventory.set_cores(cores > 0 ? cores : pus);
  inventory.set_packages(packages > 0 ? packages : (pus > 0 ? 1 : 0));
  inventory.set_numa_nodes(std::max<uint32_t>(numa_nodes, 1));
  const std::vector<hwloc_obj_t> gpus = AddGpus(topology, pci_ids, &inventory);
  const std::vector<std::pair<int, hwloc_obj_t>> hcas =
      AddNetworkDevices(topology, &inventory);
  PairGpusWithHcas(gpus, hcas, &inventory);
  SetGpuLocality(topology, gpus, &inventory);
  inventory.set_source(std::move(source));
  return inventory;
}

uint64_t HwlocMemoryMb(hwloc_topology_t topology) {
  uint64_t bytes = hwloc_get_root_obj(topology)->total_memory;
  if (bytes == 0) {
    for (hwloc_obj_t node =
             hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, nullptr);
         node != nullptr; node = hwloc_get_next_obj_by_type(
                              topology, HWLOC_OBJ_NUMANODE, node)) {
      bytes += node->attr->numanode.local_memory;
    }
  }
  return bytes >> 20;
}

}  // namespace

absl::StatusOr<v1::NodeInventory> DiscoverThisMachine() {
  return DiscoverThisMachine(PciIds());
}

absl::StatusOr<v1::NodeInventory> DiscoverThisMachine(const PciIds& pci_ids) {
  absl::StatusOr<TopologyPtr> topology = NewTopology();
  if (!topology.ok()) return topology.status();
  if (hwloc_topology_load(topology->get()) != 0) {
    return absl::InternalError(absl::StrCat(
        "hwloc cannot load this machine's topology: ", ErrnoText(errno)));
  }
  // HWLOC_XMLFILE or HWLOC_SYNTHETIC in the environment silently replace
  // this machine with a description; refuse rather than report a fake node.
  if (!hwloc_topology_is_thissystem(topology->get())) {
    return absl::InternalError(
        "hwloc loaded a topology that is not this machine (HWLOC_XMLFILE, "
        "HWLOC_SYNTHETIC or HWLOC_COMPONENTS set in the environment?); use "
        "DiscoverFromHwlocXml for a saved topology");
  }
  v1::NodeInventory inventory =
      Summarize(topology->get(), "this machine", pci_ids);
  const std::optional<uint64_t> meminfo_mb = MemTotalMbFromProc();
  inventory.set_memory_mb(
      meminfo_mb.has_value() ? *meminfo_mb : HwlocMemoryMb(topology->get()));
  AssignNetworkRoles({}, DefaultRouteInterfaceOfThisMachine(), &inventory);
  return inventory;
}

absl::StatusOr<v1::NodeInventory> DiscoverFromHwlocXml(
    const std::string& path) {
  return DiscoverFromHwlocXml(path, PciIds());
}

absl::StatusOr<v1::NodeInventory> DiscoverFromHwlocXml(const std::string& path,
                                                       const PciIds& pci_ids) {
  if (path.empty()) {
    return absl::InvalidArgumentError("empty hwloc XML path");
  }
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (st.type() == std::filesystem::file_type::not_found) {
    return absl::NotFoundError(
        absl::StrCat("hwloc XML file not found: ", path));
  }
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot access ", path, ": ", ec.message()));
  }
  if (st.type() == std::filesystem::file_type::directory) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is a directory, not an hwloc XML file"));
  }

  absl::StatusOr<TopologyPtr> topology = NewTopology();
  if (!topology.ok()) return topology.status();
  // set_xml chooses the backend explicitly, so HWLOC_XMLFILE and friends in
  // the environment are ignored.
  if (hwloc_topology_set_xml(topology->get(), path.c_str()) != 0) {
    return absl::InvalidArgumentError(
        HwlocRefusal(path, "hwloc_topology_set_xml", errno));
  }
  if (hwloc_topology_load(topology->get()) != 0) {
    return absl::InvalidArgumentError(
        HwlocRefusal(path, "hwloc_topology_load", errno));
  }
  v1::NodeInventory inventory = Summarize(topology->get(), path, pci_ids);
  inventory.set_memory_mb(HwlocMemoryMb(topology->get()));
  // A saved topology says nothing about routes.
  AssignNetworkRoles({}, "", &inventory);
  return inventory;
}

std::vector<std::string> UnnamedGpuModels(const v1::NodeInventory& inventory) {
  std::vector<std::string> unnamed;
  for (const v1::GpuInfo& gpu : inventory.gpus()) {
    if (IsUnnamedGpuModel(gpu.model()) &&
        std::find(unnamed.begin(), unnamed.end(), gpu.model()) ==
            unnamed.end()) {
      unnamed.push_back(gpu.model());
    }
  }
  return unnamed;
}

std::string UnnamedGpuNote(const v1::NodeInventory& inventory,
                           const absl::StatusOr<PciIds>& pci_ids) {
  const std::vector<std::string> unnamed = UnnamedGpuModels(inventory);
  if (unnamed.empty()) return "";
  return absl::StrCat(
      "GPUs known only by their PCI ids (", absl::StrJoin(unnamed, ", "),
      ") keep them as their model: ",
      pci_ids.ok()
          ? absl::StrCat(pci_ids->source().empty() ? "the PCI ID database"
                                                   : pci_ids->source(),
                         " does not list them (a newer pci.ids "
                         "package may)")
          : absl::StrCat(pci_ids.status().message(),
                         " (install the pci.ids package)"),
      "; jobs cannot ask for them by type (--gres=gpu:TYPE:N)");
}

std::string DefaultRouteInterfaceOfThisMachine() {
  std::ifstream in("/proc/net/route");
  if (!in) return "";
  const std::string text((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
  return DefaultRouteInterface(text);
}

std::vector<Nic> NicsOf(const v1::NodeInventory& inventory) {
  std::vector<Nic> nics;
  for (const v1::NetworkDevice& device : inventory.network_devices()) {
    Nic nic;
    nic.name = device.name();
    nic.rdma = device.kind() == "openfabrics";
    nic.pci_bus_id = device.pci_bus_id();
    nic.nearest_gpus.assign(device.gpus().begin(), device.gpus().end());
    for (const v1::HcaPort& port : device.ports()) {
      NicPort p;
      p.port = port.port();
      p.active = port.state() == "ACTIVE";
      p.roce = port.link_layer() == "Ethernet";
      p.roce_v2_gid_index = port.roce_v2_gid_index();
      nic.ports.push_back(p);
    }
    if (absl::StatusOr<NetworkRole> role = ParseNetworkRole(device.role());
        role.ok()) {
      nic.role = *role;
    }
    nics.push_back(std::move(nic));
  }
  return nics;
}

void AssignNetworkRoles(const NetworkRoleOverrides& overrides,
                        const std::string& default_route_interface,
                        v1::NodeInventory* inventory) {
  std::vector<Nic> nics = NicsOf(*inventory);
  for (Nic& nic : nics) {
    nic.default_route =
        !default_route_interface.empty() && nic.name == default_route_interface;
  }
  ClassifyNics(&nics, overrides);
  for (size_t i = 0; i < nics.size(); ++i) {
    inventory->mutable_network_devices(static_cast<int>(i))
        ->set_role(std::string(NetworkRoleName(nics[i].role)));
  }
}

}  // namespace gantry::agent
