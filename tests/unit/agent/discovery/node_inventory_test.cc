// Node discovery against real lstopo XML files from ../shared/data/hwloc and
// against this machine.
//
// The expected figures were read out of the XML files themselves (counting
// Package/Core/PU/NUMANode objects, summing NUMA local_memory, listing PCI
// devices by class and vendor and OS devices by osdev_type), not copied from
// the code's output. Tests that need the data skip with a warning when the
// folder is absent.

#include "agent/discovery/node_inventory.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/gpu_type.h"
#include "tests/unit/support/shared_data.h"

namespace gantry::agent {
namespace node_inventory_test {

namespace fs = std::filesystem;

std::string HwlocDir() { return testing::SharedDataPath("hwloc"); }

v1::NodeInventory Load(const std::string& file) {
  absl::StatusOr<v1::NodeInventory> inventory =
      DiscoverFromHwlocXml(HwlocDir() + "/" + file);
  INFO(file << ": " << inventory.status().ToString());
  REQUIRE(inventory.ok());
  return *std::move(inventory);
}

struct Expected {
  const char* file;
  const char* what;  // what the file shows, for the reader
  bool refused;      // hwloc 2.9 must refuse it
  uint32_t packages, cores, cpus, numa_nodes;
  uint64_t memory_mb;  // sum of NUMA local_memory, MiB (checked within 1%)
  int nvidia_gpus, amd_gpus;
  std::vector<int> gpu_numa;  // nearest NUMA node of each GPU, by PCI bus id
  int network, openfabrics;   // OS devices of each kind
  // Nearest OpenFabrics device of each GPU and how near ("" "": none), read
  // from the XML's PCI tree: the lowest common ancestor of the GPU's PCI
  // device and the HCA's is a PCI bridge below the host bridge (pcie-switch),
  // the host bridge itself, a CPU-side object with one NUMA node (numa) or
  // more (system); ties go to fewer hops, then to the HCA serving fewer GPUs.
  std::vector<std::pair<std::string, std::string>> pairing;
};

using P = std::vector<std::pair<std::string, std::string>>;
P Repeat(int n, const char* hca, const char* locality) {
  return P(static_cast<size_t>(n), {hca, locality});
}

// One row per file in shared/data/hwloc (a test below checks none is left
// out).
const std::vector<Expected>& Table() {
  static const auto* table = new std::vector<Expected>{
      {"aws-g4dn.metal-8xT4-efa.mpibind.v2.xml",
       "8 T4 (cuda+opencl+nvml OS devs each), EFA rdmap197s0 + ENA eth0",
       false,
       2,
       48,
       96,
       2,
       386583,
       8,
       0,
       {0, 0, 0, 0, 1, 1, 1, 1},
       1,
       1,
       P{{"rdmap197s0", "system"},
         {"rdmap197s0", "system"},
         {"rdmap197s0", "system"},
         {"rdmap197s0", "system"},
         {"rdmap197s0", "numa"},
         {"rdmap197s0", "numa"},
         {"rdmap197s0", "numa"},
         {"rdmap197s0", "numa"}}},
      {"cisco-ucs-16intel64-manyVFs-usnic.hwloc.v2.xml",
       "VIC with 13 userspace VFs (no OS devs), eth0-1,4-7, usnic_0..2",
       false,
       2,
       16,
       16,
       2,
       131037,
       0,
       0,
       {},
       6,
       3,
       P{}},
      {"cts1-quartz-2xBroadwell-omnipath.mpibind.v2.xml",
       "SMT off; Matrox BMC VGA at 07:00.0 is no GPU; hfi1_0 + hsi0",
       false,
       2,
       36,
       36,
       2,
       128515,
       0,
       0,
       {},
       5,
       1,
       P{}},
      {"deepsea-xeonmax9462-hbm-hdr.psmgmt-dp-intelmax01.v2.xml",
       "SNC4, HBM as memory-side cache (8 NUMA), ASPEED VGA, ib0/mlx5_0",
       false,
       2,
       64,
       128,
       8,
       1031055,
       0,
       0,
       {},
       3,
       1,
       P{}},
      {"dell-xe8640-4xH100-ndr.flux-ipa20.v2.xml",
       "SNC4; 4 H100 (opencl+cuda+nvml each); Matrox VGA and Intel 0b40 "
       "accelerators are no GPUs; mlx5_0..3",
       false,
       2,
       112,
       224,
       8,
       4127775,
       4,
       0,
       {3, 1, 7, 5},
       6,
       4,
       P{{"mlx5_0", "pcie-switch"},
         {"mlx5_2", "pcie-switch"},
         {"mlx5_3", "system"},
         {"mlx5_3", "pcie-switch"}}},
      {"hpe-ex235a-8xMI250X-gcd-slingshot.mpibind-tioga.v2.xml",
       "8 MI250X GCDs as class 0380 PCI devices with rsmi OS devs; hsi0..3",
       false,
       1,
       64,
       128,
       4,
       515476,
       0,
       8,
       {3, 3, 1, 1, 0, 0, 2, 2},
       5,
       0,
       Repeat(8, "", "")},
      {"hpe-ex255a-4xMI300A-slingshot-CPX.flux-tuo.v2.xml",
       "4 MI300A (class 1200), each with 6 rsmi partitions: still 4 GPUs",
       false,
       4,
       96,
       192,
       4,
       514018,
       0,
       4,
       {0, 1, 2, 3},
       5,
       0,
       Repeat(4, "", "")},
      {"hpe-ex255a-4xMI300A-slingshot-SPX.flux-tuo.v2.xml",
       "4 MI300A (class 1200), one rsmi OS dev each",
       false,
       4,
       96,
       192,
       4,
       514018,
       0,
       4,
       {0, 1, 2, 3},
       5,
       0,
       Repeat(4, "", "")},
      {"ibm-power9-4xV100-2xCX5.flux-sierra.v1.xml",
       "v1; SMT4; 4 CPU-less NUMA nodes (252-255) of GPU memory counted as "
       "NUMA and memory; ASPEED VGA has DRM OS devs but is no GPU",
       false,
       2,
       44,
       176,
       6,
       326104,
       4,
       0,
       {0, 0, 8, 8},
       6,
       4,
       P{{"mlx5_0", "numa"},
         {"mlx5_1", "numa"},
         {"mlx5_2", "numa"},
         {"mlx5_3", "numa"}}},
      {"ibm-power9-lassen-4xV100-2xCX5.mpibind.v2.xml",
       "SMT4, NUMA nodes 0 and 8; 4 V100 (cuda+nvml)",
       false,
       2,
       40,
       160,
       2,
       261561,
       4,
       0,
       {0, 0, 8, 8},
       6,
       4,
       P{{"mlx5_0", "numa"},
         {"mlx5_1", "numa"},
         {"mlx5_2", "numa"},
         {"mlx5_3", "numa"}}},
      {"meluxina-gpu-4xA100-2xHDR.psmgmt-mel2001.v1.xml",
       "v1; NPS4 (8 NUMA); A100s only have DRM card/renderD OS devs and no "
       "PCI names",
       false,
       2,
       64,
       128,
       8,
       513720,
       4,
       0,
       {3, 1, 7, 5},
       4,
       2,
       P{{"mlx5_0", "system"},
         {"mlx5_0", "pcie-switch"},
         {"mlx5_1", "pcie-switch"},
         {"mlx5_1", "system"}}},
      {"nvidia-dgx2h-16xV100.hwloc.v2.xml",
       "CPU set cut to 4 PUs; 16 V100 behind PLX switches (nvml as "
       "co-processor OS devs); NVSwitches (0680) are no GPUs",
       false,
       2,
       4,
       4,
       2,
       1546833,
       16,
       0,
       {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1},
       0,
       0,
       Repeat(16, "", "")},
      {"nvidia-dgx2h-16xV100.hwloc.v3.xml",
       "hwloc 3.0 XML format (osdev_type is a bitmask)",
       true,
       0,
       0,
       0,
       0,
       0,
       0,
       0,
       {},
       0,
       0,
       P{}},
      {"supermicro-x9drg-3xM2075-ib-wholeio.hwloc.v2.xml",
       "3 Tesla M2075 (one with cuda0/card0) plus a Radeon HD 7970 "
       "(0300, opencl0d1) at 84:00.1; Matrox VGA is no GPU; ib0/mlx5_0",
       false,
       2,
       16,
       32,
       2,
       65507,
       3,
       1,
       {0, 1, 1, 1},
       3,
       1,
       P{{"mlx5_0", "system"},
         {"mlx5_0", "host-bridge"},
         {"mlx5_0", "pcie-switch"},
         {"mlx5_0", "pcie-switch"}}},
  };
  return *table;
}

TEST_CASE("every hwloc data file has a row in the table") {
  GANTRY_REQUIRE_SHARED_DATA(HwlocDir());
  std::set<std::string> listed;
  for (const Expected& e : Table()) listed.insert(e.file);
  int files = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(HwlocDir())) {
    if (entry.path().extension() != ".xml") continue;
    ++files;
    INFO("add a row for " << entry.path().filename().string());
    CHECK(listed.count(entry.path().filename().string()) == 1);
  }
  CHECK(files == static_cast<int>(Table().size()));
}

TEST_CASE("inventory of each hwloc data file matches the file") {
  GANTRY_REQUIRE_SHARED_DATA(HwlocDir());
  for (const Expected& e : Table()) {
    DYNAMIC_SECTION(e.file) {
      INFO(e.what);
      const std::string path = HwlocDir() + "/" + e.file;
      absl::StatusOr<v1::NodeInventory> result = DiscoverFromHwlocXml(path);
      if (e.refused) {
        CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
        continue;
      }
      INFO(result.status().ToString());
      REQUIRE(result.ok());
      const v1::NodeInventory& inv = *result;
      CHECK(inv.source() == path);
      CHECK(inv.packages() == e.packages);
      CHECK(inv.cores() == e.cores);
      CHECK(inv.cpus() == e.cpus);
      CHECK(inv.numa_nodes() == e.numa_nodes);
      CHECK(static_cast<double>(inv.memory_mb()) ==
            Approx(static_cast<double>(e.memory_mb)).epsilon(0.01));

      int nvidia = 0;
      int amd = 0;
      std::vector<int> numa;
      std::string previous_bus_id;
      for (int i = 0; i < inv.gpus_size(); ++i) {
        const v1::GpuInfo& gpu = inv.gpus(i);
        INFO("gpu " << i << " " << gpu.ShortDebugString());
        CHECK(gpu.index() == static_cast<uint32_t>(i));
        CHECK(gpu.pci_bus_id().size() == 12);  // 0000:07:00.0
        CHECK(gpu.pci_bus_id() > previous_bus_id);
        CHECK_FALSE(gpu.model().empty());
        previous_bus_id = gpu.pci_bus_id();
        nvidia += gpu.vendor() == "NVIDIA";
        amd += gpu.vendor() == "AMD";
        numa.push_back(gpu.numa_node());
      }
      CHECK(inv.gpus_size() == e.nvidia_gpus + e.amd_gpus);
      CHECK(nvidia == e.nvidia_gpus);
      CHECK(amd == e.amd_gpus);
      CHECK(numa == e.gpu_numa);

      int network = 0;
      int openfabrics = 0;
      for (const v1::NetworkDevice& dev : inv.network_devices()) {
        INFO(dev.ShortDebugString());
        CHECK_FALSE(dev.name().empty());
        CHECK_FALSE(dev.pci_bus_id().empty());  // all hang from a PCI device
        network += dev.kind() == "network";
        openfabrics += dev.kind() == "openfabrics";
      }
      CHECK(network == e.network);
      CHECK(openfabrics == e.openfabrics);
      CHECK(inv.network_devices_size() == network + openfabrics);

      P pairing;
      for (const v1::GpuInfo& gpu : inv.gpus()) {
        pairing.emplace_back(gpu.nearest_hca(), gpu.hca_locality());
      }
      CHECK(pairing == e.pairing);
      // Each HCA lists the GPUs it is the nearest HCA of, in index order.
      for (const v1::NetworkDevice& dev : inv.network_devices()) {
        std::vector<uint32_t> expected;
        for (size_t i = 0; i < e.pairing.size(); ++i) {
          if (e.pairing[i].first == dev.name()) {
            expected.push_back(static_cast<uint32_t>(i));
          }
        }
        INFO(dev.name());
        CHECK(std::vector<uint32_t>(dev.gpus().begin(), dev.gpus().end()) ==
              expected);
        CHECK_FALSE(dev.role().empty());
      }
    }
  }
}

TEST_CASE("hwloc XML version 3 is refused with a clear error") {
  GANTRY_REQUIRE_SHARED_DATA(HwlocDir());
  const std::string path = HwlocDir() + "/nvidia-dgx2h-16xV100.hwloc.v3.xml";
  absl::StatusOr<v1::NodeInventory> result = DiscoverFromHwlocXml(path);
  INFO(result.status().ToString());
  REQUIRE(result.status().code() == absl::StatusCode::kInvalidArgument);
  const std::string message(result.status().message());
  CHECK(message.find(path) != std::string::npos);
  CHECK(message.find("XML version 3.0") != std::string::npos);
}

TEST_CASE(
    "a missing file is NOT_FOUND, a directory or non-hwloc XML is "
    "INVALID_ARGUMENT") {
  const fs::path dir = fs::temp_directory_path() /
                       ("gantry_node_inventory_test_" +
                        std::to_string(static_cast<long>(::getpid())));
  fs::create_directories(dir);
  const fs::path not_hwloc = dir / "not-hwloc.xml";
  std::ofstream(not_hwloc) << "<?xml version=\"1.0\"?>\n<system/>\n";

  CHECK(DiscoverFromHwlocXml((dir / "absent.xml").string()).status().code() ==
        absl::StatusCode::kNotFound);
  CHECK(DiscoverFromHwlocXml(dir.string()).status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(DiscoverFromHwlocXml(not_hwloc.string()).status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(DiscoverFromHwlocXml("").status().code() ==
        absl::StatusCode::kInvalidArgument);
  fs::remove_all(dir);
}

TEST_CASE("board-management VGA is never a GPU, even with DRM OS devices") {
  GANTRY_REQUIRE_SHARED_DATA(HwlocDir());
  struct Bmc {
    const char* file;
    const char* bus_id;
  };
  for (const Bmc& bmc : {
           Bmc{"cts1-quartz-2xBroadwell-omnipath.mpibind.v2.xml",
               "0000:07:00.0"},  // Matrox
           Bmc{"dell-xe8640-4xH100-ndr.flux-ipa20.v2.xml",
               "0000:03:00.0"},  // Matrox
           Bmc{"ibm-power9-4xV100-2xCX5.flux-sierra.v1.xml",
               "0002:02:00.0"},  // ASPEED with card4/controlD68
           Bmc{"meluxina-gpu-4xA100-2xHDR.psmgmt-mel2001.v1.xml",
               "0000:62:00.0"},  // ASPEED with card0/controlD64
       }) {
    const v1::NodeInventory inv = Load(bmc.file);
    for (const v1::GpuInfo& gpu : inv.gpus()) {
      INFO(bmc.file);
      CHECK(gpu.pci_bus_id() != bmc.bus_id);
    }
  }
}

TEST_CASE("a GPU is counted once whatever OS devices hang from it") {
  GANTRY_REQUIRE_SHARED_DATA(HwlocDir());
  const v1::NodeInventory dell =
      Load("dell-xe8640-4xH100-ndr.flux-ipa20.v2.xml");
  REQUIRE(dell.gpus_size() == 4);
  CHECK(dell.gpus(0).pci_bus_id() == "0000:4e:00.0");
  CHECK(dell.gpus(0).model() == "NVIDIA H100 80GB HBM3");
  CHECK(dell.gpus(3).pci_bus_id() == "0000:db:00.0");

  const v1::NodeInventory cpx =
      Load("hpe-ex255a-4xMI300A-slingshot-CPX.flux-tuo.v2.xml");
  REQUIRE(cpx.gpus_size() == 4);
  CHECK(cpx.gpus(1).pci_bus_id() == "0001:02:00.0");
  CHECK(cpx.gpus(1).vendor() == "AMD");
  CHECK(cpx.gpus(1).model() == "Aqua Vanjaram [Instinct MI300A]");
}

absl::StatusOr<PciIds> SystemPciIds() {
  return PciIds::LoadFirst(PciIds::SystemPaths());
}

TEST_CASE("GPUs known only by PCI ids are named from pci.ids") {
  GANTRY_REQUIRE_SHARED_DATA(HwlocDir());
  // Written where hwloc had no pci.ids: "PCI 10de:20b0", nothing more.
  const std::string meluxina =
      HwlocDir() + "/meluxina-gpu-4xA100-2xHDR.psmgmt-mel2001.v1.xml";
  SECTION("without a database the PCI ids stay, and the agent says so") {
    absl::StatusOr<v1::NodeInventory> inv = DiscoverFromHwlocXml(meluxina);
    REQUIRE(inv.ok());
    REQUIRE(inv->gpus_size() == 4);
    for (const v1::GpuInfo& gpu : inv->gpus()) {
      CHECK(gpu.vendor() == "NVIDIA");
      CHECK(gpu.model() == "PCI 10de:20b0");
    }
    CHECK(UnnamedGpuModels(*inv) == std::vector<std::string>{"PCI 10de:20b0"});
    const std::string note = UnnamedGpuNote(
        *inv, absl::NotFoundError("no PCI ID database (pci.ids) at /x"));
    CHECK(note.find("PCI 10de:20b0") != std::string::npos);
    CHECK(note.find("no PCI ID database (pci.ids) at /x") != std::string::npos);
    CHECK(note.find("install the pci.ids package") != std::string::npos);
  }
  SECTION("a database that lacks the id keeps it too") {
    const PciIds other = PciIds::Parse(
        "10de  NVIDIA Corporation\n\t2330  GH100[H100 SXM5]\n", "/tmp/old.ids");
    absl::StatusOr<v1::NodeInventory> inv =
        DiscoverFromHwlocXml(meluxina, other);
    REQUIRE(inv.ok());
    CHECK(inv->gpus(0).model() == "PCI 10de:20b0");
    const std::string note = UnnamedGpuNote(*inv, other);
    CHECK(note.find("/tmp/old.ids does not list them") != std::string::npos);
  }
  SECTION("a fixture that has the id names every GPU") {
    const PciIds fixture = PciIds::Parse(
        "10de  NVIDIA Corporation\n\t20b0  GA100 [A100 SXM4 40GB]\n");
    absl::StatusOr<v1::NodeInventory> inv =
        DiscoverFromHwlocXml(meluxina, fixture);
    REQUIRE(inv.ok());
    for (const v1::GpuInfo& gpu : inv->gpus()) {
      CHECK(gpu.model() == "GA100 [A100 SXM4 40GB]");
      CHECK(GpuTypeOf(gpu.model()) == "a100");
    }
    CHECK(UnnamedGpuModels(*inv).empty());
    CHECK(UnnamedGpuNote(*inv, fixture).empty());
  }
  SECTION("the system's pci.ids names them A100") {
    absl::StatusOr<PciIds> system = SystemPciIds();
    if (!system.ok()) {
      GANTRY_SKIP(system.status().message()
                  << " (Debian: apt-get install pci.ids)");
    }
    absl::StatusOr<v1::NodeInventory> inv =
        DiscoverFromHwlocXml(meluxina, *system);
    REQUIRE(inv.ok());
    REQUIRE(inv->gpus_size() == 4);
    for (const v1::GpuInfo& gpu : inv->gpus()) {
      CHECK(gpu.model() == "GA100 [A100 SXM4 40GB]");
      CHECK(GpuTypeOf(gpu.model()) == "a100");
    }
  }
}

// The GPU type of every real server's GPUs, by PCI bus id order, with the
// system's pci.ids. Names that the files carry win over pci.ids, so only
// the meluxina file (ids alone) depends on it.
TEST_CASE("the GPUs of every real server have a name and a type") {
  GANTRY_REQUIRE_SHARED_DATA(HwlocDir());
  absl::StatusOr<PciIds> system = SystemPciIds();
  if (!system.ok()) {
    GANTRY_SKIP(system.status().message()
                << " (Debian: apt-get install pci.ids)");
  }
  const std::map<std::string, std::vector<std::string>> types = {
      {"aws-g4dn.metal-8xT4-efa.mpibind.v2.xml",
       std::vector<std::string>(8, "t4")},
      {"dell-xe8640-4xH100-ndr.flux-ipa20.v2.xml",
       std::vector<std::string>(4, "h100")},
      // ROCm calls these MI250X GCDs "AMD INSTINCT MI200 (MCM) ...".
      {"hpe-ex235a-8xMI250X-gcd-slingshot.mpibind-tioga.v2.xml",
       std::vector<std::string>(8, "mi200")},
      {"hpe-ex255a-4xMI300A-slingshot-CPX.flux-tuo.v2.xml",
       std::vector<std::string>(4, "mi300a")},
      {"hpe-ex255a-4xMI300A-slingshot-SPX.flux-tuo.v2.xml",
       std::vector<std::string>(4, "mi300a")},
      {"ibm-power9-4xV100-2xCX5.flux-sierra.v1.xml",
       std::vector<std::string>(4, "v100")},
      {"ibm-power9-lassen-4xV100-2xCX5.mpibind.v2.xml",
       std::vector<std::string>(4, "v100")},
      {"meluxina-gpu-4xA100-2xHDR.psmgmt-mel2001.v1.xml",
       std::vector<std::string>(4, "a100")},
      {"nvidia-dgx2h-16xV100.hwloc.v2.xml",
       std::vector<std::string>(16, "v100")},
      {"supermicro-x9drg-3xM2075-ib-wholeio.hwloc.v2.xml",
       {"m2075", "m2075", "k40m", "r9"}},
  };
  for (const Expected& e : Table()) {
    if (e.refused) continue;
    INFO(e.file);
    absl::StatusOr<v1::NodeInventory> inv =
        DiscoverFromHwlocXml(HwlocDir() + "/" + e.file, *system);
    REQUIRE(inv.ok());
    CHECK(UnnamedGpuModels(*inv).empty());
    std::vector<std::string> found;
    for (const v1::GpuInfo& gpu : inv->gpus()) {
      found.push_back(GpuTypeOf(gpu.model()));
    }
    auto it = types.find(e.file);
    CHECK(found ==
          (it == types.end() ? std::vector<std::string>{} : it->second));
  }
}

TEST_CASE("a second GPU vendor in the same slot is a GPU of its own") {
  GANTRY_REQUIRE_SHARED_DATA(HwlocDir());
  const v1::NodeInventory inv =
      Load("supermicro-x9drg-3xM2075-ib-wholeio.hwloc.v2.xml");
  REQUIRE(inv.gpus_size() == 4);
  CHECK(inv.gpus(2).pci_bus_id() == "0000:84:00.0");
  CHECK(inv.gpus(2).vendor() == "NVIDIA");
  CHECK(inv.gpus(3).pci_bus_id() == "0000:84:00.1");
  CHECK(inv.gpus(3).vendor() == "AMD");
  CHECK(inv.gpus(3).model() == "AMD Radeon R9 200 / HD 7900 Series");
}

TEST_CASE("network devices carry their PCI bus id and NUMA node") {
  GANTRY_REQUIRE_SHARED_DATA(HwlocDir());
  struct Nic {
    const char* file;
    const char* name;
    const char* kind;
    const char* bus_id;
    int numa_node;
  };
  for (const Nic& nic : {
           Nic{"dell-xe8640-4xH100-ndr.flux-ipa20.v2.xml", "mlx5_0",
               "openfabrics", "0000:4d:00.0", 3},
           Nic{"dell-xe8640-4xH100-ndr.flux-ipa20.v2.xml", "ibp218s0",
               "network", "0000:da:00.0", 5},
           Nic{"aws-g4dn.metal-8xT4-efa.mpibind.v2.xml", "rdmap197s0",
               "openfabrics", "0000:c5:00.0", 1},
           Nic{"cts1-quartz-2xBroadwell-omnipath.mpibind.v2.xml", "hfi1_0",
               "openfabrics", "0000:83:00.0", 1},
           Nic{"cisco-ucs-16intel64-manyVFs-usnic.hwloc.v2.xml", "usnic_2",
               "openfabrics", "0000:88:00.0", 1},
           Nic{"ibm-power9-4xV100-2xCX5.flux-sierra.v1.xml", "mlx5_3",
               "openfabrics", "0033:01:00.1", 8},
           Nic{"hpe-ex235a-8xMI250X-gcd-slingshot.mpibind-tioga.v2.xml", "hsi0",
               "network", "0000:c5:00.0", 3},
       }) {
    INFO(nic.file << " " << nic.name);
    const v1::NodeInventory inv = Load(nic.file);
    int found = 0;
    for (const v1::NetworkDevice& dev : inv.network_devices()) {
      if (dev.name() != nic.name) continue;
      ++found;
      CHECK(dev.kind() == nic.kind);
      CHECK(dev.pci_bus_id() == nic.bus_id);
      CHECK(dev.numa_node() == nic.numa_node);
    }
    CHECK(found == 1);
  }
}

TEST_CASE("network roles by default: compute near GPUs, one management") {
  GANTRY_REQUIRE_SHARED_DATA(HwlocDir());
  struct Row {
    const char* file;
    std::map<std::string, std::string> roles;
  };
  for (const Row& row : {
           // mlx5_1 (second port of the CX-6) is nearest to no GPU; the IPoIB
           // interfaces follow their HCA; no route is known, so the first
           // plain Ethernet port is management.
           Row{"dell-xe8640-4xH100-ndr.flux-ipa20.v2.xml",
               {{"eno8303", "management"},
                {"eno8403", "storage"},
                {"ibp94s0", "compute"},
                {"mlx5_2", "compute"},
                {"hsi0", "compute"},
                {"mlx5_0", "compute"},
                {"ibs2f1", "storage"},
                {"mlx5_1", "storage"},
                {"ibp218s0", "compute"},
                {"mlx5_3", "compute"}}},
           Row{"aws-g4dn.metal-8xT4-efa.mpibind.v2.xml",
               {{"rdmap197s0", "compute"}, {"eth0", "management"}}},
           // No GPUs: the Omni-Path HFI is storage.
           Row{"cts1-quartz-2xBroadwell-omnipath.mpibind.v2.xml",
               {{"eno1", "management"},
                {"aci0", "storage"},
                {"ens786f0", "storage"},
                {"ens786f1", "storage"},
                {"hsi0", "storage"},
                {"hfi1_0", "storage"}}},
       }) {
    INFO(row.file);
    const v1::NodeInventory inv = Load(row.file);
    std::map<std::string, std::string> roles;
    for (const v1::NetworkDevice& dev : inv.network_devices()) {
      roles[dev.name()] = dev.role();
    }
    CHECK(roles == row.roles);
  }
}

TEST_CASE("roles follow the default route and configured overrides") {
  GANTRY_REQUIRE_SHARED_DATA(HwlocDir());
  v1::NodeInventory inv = Load("dell-xe8640-4xH100-ndr.flux-ipa20.v2.xml");
  AssignNetworkRoles({{"mlx5_1", NetworkRole::kCompute}}, "eno8403", &inv);
  std::map<std::string, std::string> roles;
  for (const v1::NetworkDevice& dev : inv.network_devices()) {
    roles[dev.name()] = dev.role();
  }
  CHECK(roles["eno8403"] == "management");
  CHECK(roles["eno8303"] == "storage");
  CHECK(roles["mlx5_1"] == "compute");
  CHECK(roles["ibs2f1"] == "compute");
}

TEST_CASE("the NCCL environment of a rank on a discovered node") {
  GANTRY_REQUIRE_SHARED_DATA(HwlocDir());
  const v1::NodeInventory inv =
      Load("dell-xe8640-4xH100-ndr.flux-ipa20.v2.xml");
  CHECK(
      NcclEnvironment(NicsOf(inv), {3, 0}) ==
      std::map<std::string, std::string>{{"NCCL_IB_HCA", "=mlx5_3:1,mlx5_0:1"},
                                         {"NCCL_SOCKET_IFNAME", "=eno8303"}});
}

TEST_CASE("HCAs carry the node GUID hwloc read") {
  GANTRY_REQUIRE_SHARED_DATA(HwlocDir());
  const v1::NodeInventory inv =
      Load("ibm-power9-lassen-4xV100-2xCX5.mpibind.v2.xml");
  for (const v1::NetworkDevice& dev : inv.network_devices()) {
    if (dev.name() == "mlx5_1") CHECK(dev.node_guid() == "0x506b4b03003ceee9");
    if (dev.kind() == "network") CHECK(dev.node_guid().empty());
  }
}

// Cases none of the real files has, in a small hand-written v2 file: an
// Intel integrated VGA (0300, not a GPU) and a data-center GPU (0380), an
// NVIDIA GPU with a second function of the same class (a virtual function),
// and two GPUs that only show as NVML and CUDA OS devices with no PCI parent.
constexpr char kSyntheticXml[] = R"xml(<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="2.0">
  <object type="Machine" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" allowed_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001" allowed_nodeset="0x00000001" gp_index="1">
    <object type="Package" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="2">
      <object type="NUMANode" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="3" local_memory="4294967296"/>
      <object type="Core" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="4">
        <object type="PU" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="5"/>
        <object type="PU" os_index="1" cpuset="0x00000002" complete_cpuset="0x00000002" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="6"/>
      </object>
      <object type="Bridge" gp_index="7" bridge_type="0-1" depth="0" bridge_pci="0000:[00-ff]">
        <object type="PCIDev" gp_index="8" pci_busid="0000:00:02.0" pci_type="0300 [8086:3e92] [8086:0000] 00"/>
        <object type="PCIDev" gp_index="9" pci_busid="0000:3b:00.0" pci_type="0302 [10de:20b0] [10de:1450] a1"/>
        <object type="PCIDev" gp_index="10" pci_busid="0000:3b:00.4" pci_type="0302 [10de:20b0] [10de:1450] a1"/>
        <object type="PCIDev" gp_index="11" pci_busid="0000:4c:00.0" pci_type="0380 [8086:0bd5] [8086:0000] 2f"/>
      </object>
    </object>
    <object type="OSDev" gp_index="20" name="nvml1" subtype="NVML" osdev_type="1"><info name="GPUModel" value="Mystery"/></object>
    <object type="OSDev" gp_index="21" name="nvml0" subtype="NVML" osdev_type="1"><info name="GPUModel" value="Mystery"/></object>
    <object type="OSDev" gp_index="22" name="cuda0" subtype="CUDA" osdev_type="5"/>
    <object type="OSDev" gp_index="23" name="cuda1" subtype="CUDA" osdev_type="5"/>
  </object>
</topology>
)xml";

TEST_CASE("synthetic file: VFs, Intel classes, GPUs without a PCI parent") {
  const fs::path dir = fs::temp_directory_path() /
                       ("gantry_node_inventory_synth_" +
                        std::to_string(static_cast<long>(::getpid())));
  fs::create_directories(dir);
  const fs::path file = dir / "synthetic.xml";
  std::ofstream(file) << kSyntheticXml;
  absl::StatusOr<v1::NodeInventory> result =
      DiscoverFromHwlocXml(file.string());
  fs::remove_all(dir);
  INFO(result.status().ToString());
  REQUIRE(result.ok());
  const v1::NodeInventory& inv = *result;
  INFO(inv.ShortDebugString());
  CHECK(inv.packages() == 1);
  CHECK(inv.cores() == 1);
  CHECK(inv.cpus() == 2);
  CHECK(inv.memory_mb() == 4096);
  REQUIRE(inv.gpus_size() == 4);
  CHECK(inv.gpus(0).pci_bus_id() == "0000:3b:00.0");  // not its VF 3b:00.4
  CHECK(inv.gpus(0).vendor() == "NVIDIA");
  CHECK(inv.gpus(0).model() == "PCI 10de:20b0");      // no pci.ids given
  CHECK(inv.gpus(1).pci_bus_id() == "0000:4c:00.0");  // not the iGPU 00:02.0
  CHECK(inv.gpus(1).vendor() == "Intel");
  for (int i : {2, 3}) {  // nvml0/nvml1; cuda0/cuda1 are the same two GPUs
    CHECK(inv.gpus(i).index() == static_cast<uint32_t>(i));
    CHECK(inv.gpus(i).pci_bus_id().empty());
    CHECK(inv.gpus(i).vendor() == "NVIDIA");
    CHECK(inv.gpus(i).model() == "Mystery");
    CHECK(inv.gpus(i).numa_node() == 0);
  }
}

}  // namespace node_inventory_test
}  // namespace gantry::agent
