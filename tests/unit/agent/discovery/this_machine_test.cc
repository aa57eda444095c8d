// Discovery of the machine the tests run on, checked against what
// /proc/meminfo and sysfs say (no GPU or HCA here: it must still find the
// CPUs, memory and network devices; a GPU machine must find what sysfs
// lists). The real servers' files are node_inventory_test's.
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "agent/discovery/node_inventory.h"

namespace gantry::agent {
namespace this_machine_test {

namespace fs = std::filesystem;

uint64_t MemTotalMb() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemTotal:") return kib / 1024;
  }
  return 0;
}

// GPUs as sysfs lists them: NVIDIA/AMD display or accelerator class, Intel
// data-center class, not virtual functions.
int SysfsGpuCount() {
  const fs::path root = "/sys/bus/pci/devices";
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return -1;
  int count = 0;
  for (const fs::directory_entry& dev : fs::directory_iterator(root, ec)) {
    unsigned vendor = 0;
    unsigned cls = 0;
    std::ifstream(dev.path() / "vendor") >> std::hex >> vendor;
    std::ifstream(dev.path() / "class") >> std::hex >> cls;
    if (fs::exists(dev.path() / "physfn", ec)) continue;
    const unsigned class_id = cls >> 8;
    const unsigned base = class_id >> 8;
    const bool gpu_class = base == 0x03 || base == 0x12;
    if (((vendor == 0x10de || vendor == 0x1002) && gpu_class) ||
        (vendor == 0x8086 && (class_id == 0x0380 || class_id == 0x0302))) {
      ++count;
    }
  }
  return count;
}

TEST_CASE("this machine is discovered") {
  absl::StatusOr<v1::NodeInventory> result = DiscoverThisMachine();
  INFO(result.status().ToString());
  REQUIRE(result.ok());
  const v1::NodeInventory& inv = *result;
  INFO(inv.ShortDebugString());
  CHECK(inv.source() == "this machine");
  CHECK(inv.cpus() >= 1);
  CHECK(inv.cores() >= 1);
  CHECK(inv.cores() <= inv.cpus());
  CHECK(inv.packages() >= 1);
  CHECK(inv.packages() <= inv.cores());
  CHECK(inv.numa_nodes() >= 1);
  if (const uint64_t mem = MemTotalMb(); mem > 0) {
    CHECK(inv.memory_mb() == mem);
  } else {
    CHECK(inv.memory_mb() > 0);
  }
  // A VM without GPUs reports none; a GPU machine reports what sysfs lists.
  if (const int sysfs_gpus = SysfsGpuCount(); sysfs_gpus >= 0) {
    CHECK(inv.gpus_size() == sysfs_gpus);
  }
  for (int i = 0; i < inv.gpus_size(); ++i) {
    CHECK(inv.gpus(i).index() == static_cast<uint32_t>(i));
    CHECK_FALSE(inv.gpus(i).vendor().empty());
  }
  for (const v1::NetworkDevice& dev : inv.network_devices()) {
    CHECK((dev.kind() == "network" || dev.kind() == "openfabrics"));
  }
}

}  // namespace this_machine_test
}  // namespace gantry::agent
