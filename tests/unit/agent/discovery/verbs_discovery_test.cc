// libibverbs discovery: the attribute -> model translation with the values
// real ConnectX ports report, the speed/width encodings, attaching verbs
// devices to an hwloc inventory, and the real calls, run here (no HCA: an
// empty list) and against a fake sysfs tree in a private mount namespace
// (the device is listed; opening it fails, so it has no ports).

#include "agent/discovery/verbs_discovery.h"

#include <arpa/inet.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "agent/discovery/node_inventory.h"
#include "tests/unit/support/shared_data.h"

namespace gantry::agent {
namespace verbs_discovery_test {

namespace fs = std::filesystem;

// A GID as show_gids / ibv_devinfo print it.
RecordedGid Gid(uint32_t index, const char* text, GidType type) {
  RecordedGid gid;
  gid.index = index;
  gid.type = type;
  REQUIRE(inet_pton(AF_INET6, text, gid.raw.data()) == 1);
  return gid;
}

RecordedPort Port(int state, uint8_t link_layer, uint8_t width, uint8_t speed,
                  uint16_t lid, std::vector<RecordedGid> gids,
                  std::string netdev = "") {
  RecordedPort port;
  port.port_num = 1;
  port.state = state;
  port.link_layer = link_layer;
  port.active_width = width;
  port.active_speed = speed;
  port.lid = lid;
  port.gids = std::move(gids);
  port.netdev = std::move(netdev);
  return port;
}

constexpr uint8_t kIb = 1;
constexpr uint8_t kEth = 2;
constexpr uint8_t k1x = 1;
constexpr uint8_t k4x = 2;
constexpr uint8_t kEdr = 32;
constexpr uint8_t kHdr = 64;
constexpr uint8_t kNdr = 128;
constexpr GidType kV1 = GidType::kRoceV1;
constexpr GidType kV2 = GidType::kRoceV2;

struct Recorded {
  const char* what;  // the card, and where the values were recorded
  RecordedPort port;
  const char* state;
  const char* link_layer;
  double rate_gbps;
  uint32_t lid;
  const char* port_guid;
  int roce_v2_gid_index;
};

// Width and speed codes are the ibv_port_attr encodings of what the source
// printed ("4xNDR", "Rate: 100", "active_width: 1X (1)").
const std::vector<Recorded>& RecordedPorts() {
  static const auto* rows = new std::vector<Recorded>{
      {"ConnectX-7 NDR IB 4x: adapter 'a08-p1-dgx-04-c01 mlx5_5' in "
       "shared/data/fabric/ibnetdiscover (port GUID e09d7303007a4bd8, lid "
       "647, 4xNDR)",
       Port(4, kIb, k4x, kNdr, 647,
            {Gid(0, "fe80::e09d:7303:7a:4bd8", GidType::kIb)}),
       "ACTIVE", "InfiniBand", 400, 647, "0xe09d7303007a4bd8", -1},
      {"ConnectX-6 HDR IB 4x: mlx5_0 of the DEEP-SEA node in "
       "shared/data/hwloc (Port1State 4, Port1LID 0xd6, Port1GID0)",
       Port(4, kIb, k4x, kHdr, 0xd6,
            {Gid(0, "fe80::a088:c203:25:dcc8", GidType::kIb)}),
       "ACTIVE", "InfiniBand", 200, 0xd6, "0xa088c2030025dcc8", -1},
      {"ConnectX-6 HDR IB, port down: mlx5_0 of the MeluXina node in "
       "shared/data/hwloc (Port1State 1, Port1LID 0xffff)",
       Port(1, kIb, k4x, 1, 0xffff,
            {Gid(0, "fe80::800:3803:bb:34d4", GidType::kIb)}),
       "DOWN", "InfiniBand", 10, 0xffff, "0x0800380300bb34d4", -1},
      {"ConnectX-5 EDR IB 4x: mlx5_0 of the Lassen node in shared/data/hwloc "
       "(Port1State 4, Port1LID 0x527, Port1GID0)",
       Port(4, kIb, k4x, kEdr, 0x527,
            {Gid(0, "fe80::506b:4b03:3c:eee8", GidType::kIb)}),
       "ACTIVE", "InfiniBand", 100, 0x527, "0x506b4b03003ceee8", -1},
      {"ConnectX-6 Dx RoCE 100GbE: ibstat in NVIDIA/l2fwd-nv issue 6 (MT4125, "
       "Rate 100, Base lid 0, Port GUID 0x0e42a1fffe1dd12a, Ethernet); GID "
       "0/1 are the link-local v1/v2 pair every RoCE port has",
       Port(4, kEth, k4x, kEdr, 0,
            {Gid(0, "fe80::e42:a1ff:fe1d:d12a", kV1),
             Gid(1, "fe80::e42:a1ff:fe1d:d12a", kV2)}),
       "ACTIVE", "Ethernet", 100, 0, "0x0e42a1fffe1dd12a", 1},
      {"ConnectX-6 RoCE with an IPv4 address: show_gids in "
       "IBM/SpectrumScale_NETWORK_READINESS PR 4 (ens1f0, GIDs 0-5; the "
       "speed is not in the source, 100GbE is assumed)",
       Port(4, kEth, k4x, kEdr, 0,
            {Gid(0, "fe80::e42:a1ff:fe5d:4db8", kV1),
             Gid(1, "fe80::e42:a1ff:fe5d:4db8", kV2),
             Gid(2, "fe80::1186:a6b1:3f0b:c441", kV1),
             Gid(3, "fe80::1186:a6b1:3f0b:c441", kV2),
             Gid(4, "::ffff:172.19.0.60", kV1),
             Gid(5, "::ffff:172.19.0.60", kV2)},
            "ens1f0"),
       "ACTIVE", "Ethernet", 100, 0, "0x0e42a1fffe5d4db8", 5},
      {"ConnectX RoCE 25GbE 1x: ibv_devinfo -v in "
       "Mellanox/k8s-rdma-shared-dev-plugin issue 164 (active_width 1X (1), "
       "active_speed 25.0 Gbps (32), GID 14/15 ::ffff:192.168.6.6; v1/v2 as "
       "mlx5 pairs them)",
       Port(4, kEth, k1x, kEdr, 0,
            {Gid(14, "::ffff:192.168.6.6", kV1),
             Gid(15, "::ffff:192.168.6.6", kV2)}),
       "ACTIVE", "Ethernet", 25, 0, "", 15},
  };
  return *rows;
}

TEST_CASE("recorded ConnectX ports translate into Gantry's model") {
  for (const Recorded& row : RecordedPorts()) {
    INFO(row.what);
    const v1::HcaPort port = TranslatePortAttributes(row.port);
    INFO(port.ShortDebugString());
    CHECK(port.port() == 1);
    CHECK(port.state() == row.state);
    CHECK(port.link_layer() == row.link_layer);
    CHECK(port.rate_gbps() == Approx(row.rate_gbps));
    CHECK(port.lid() == row.lid);
    CHECK(port.port_guid() == row.port_guid);
    CHECK(port.roce_v2_gid_index() == row.roce_v2_gid_index);
    CHECK(port.netdev() == row.port.netdev);
  }
}

TEST_CASE("speed and width encodings") {
  struct Row {
    uint8_t width;
    uint32_t speed;  // active_speed, or active_speed_ex when > 255
    double rate;
    const char* name;
  };
  for (const Row& row : {
           Row{1, 1, 2.5, "SDR 1x"},
           Row{2, 1, 10, "SDR 4x"},
           Row{2, 2, 20, "DDR 4x"},
           Row{2, 4, 40, "QDR 4x"},
           Row{2, 8, 40, "FDR10 4x"},
           Row{2, 16, 56, "FDR 4x"},
           Row{2, 32, 100, "EDR 4x"},
           Row{8, 32, 300, "EDR 12x"},
           Row{4, 32, 200, "EDR 8x"},
           Row{16, 64, 100, "HDR100 (2x)"},
           Row{2, 64, 200, "HDR 4x"},
           Row{16, 128, 200, "NDR200 (2x)"},
           Row{2, 128, 400, "NDR 4x"},
           Row{2, 256, 800, "XDR 4x"},
           Row{3, 64, 0, "bad width"},
           Row{2, 3, 0, "bad speed"},
           Row{0, 0, 0, "nothing"},
       }) {
    INFO(row.name);
    RecordedPort port = Port(4, kIb, row.width, 0, 1, {});
    if (row.speed > 255) {
      port.active_speed_ex = row.speed;
    } else {
      port.active_speed = static_cast<uint8_t>(row.speed);
    }
    CHECK(TranslatePortAttributes(port).rate_gbps() == Approx(row.rate));
  }
  CHECK(LaneRateGbps(16) == Approx(14));
  CHECK(LaneCount(16) == 2);
}

TEST_CASE("states, link layers and RoCE GID choices") {
  const char* const states[] = {"NOP",    "DOWN",         "INIT",   "ARMED",
                                "ACTIVE", "ACTIVE_DEFER", "UNKNOWN"};
  for (int s = 0; s <= 6; ++s) {
    CHECK(TranslatePortAttributes(Port(s, kIb, k4x, kNdr, 1, {})).state() ==
          states[s]);
  }
  // Unspecified link layer is InfiniBand (old kernels); unknown is "".
  CHECK(TranslatePortAttributes(Port(4, 0, k4x, kNdr, 1, {})).link_layer() ==
        "InfiniBand");
  CHECK(TranslatePortAttributes(Port(4, 9, k4x, kNdr, 1, {})).link_layer() ==
        "");
  // RoCE v2 without IPv4: the first v2 GID; zero GIDs are skipped; v1 only:
  // none. InfiniBand never has one, and its LID is kept.
  CHECK(TranslatePortAttributes(
            Port(4, kEth, k4x, kEdr, 7,
                 {Gid(0, "::", kV2), Gid(1, "fe80::1", kV1),
                  Gid(2, "fe80::1", kV2), Gid(3, "2001:db8::1", kV2)}))
            .roce_v2_gid_index() == 2);
  CHECK(TranslatePortAttributes(
            Port(4, kEth, k4x, kEdr, 7, {Gid(0, "::ffff:10.0.0.1", kV1)}))
            .roce_v2_gid_index() == -1);
  const v1::HcaPort ib = TranslatePortAttributes(
      Port(4, kIb, k4x, kNdr, 7, {Gid(3, "::ffff:10.0.0.1", kV2)}));
  CHECK(ib.roce_v2_gid_index() == -1);
  CHECK(ib.lid() == 7);
  CHECK(TranslatePortAttributes(Port(4, kEth, k4x, kEdr, 7, {})).lid() == 0);
}

TEST_CASE("verbs devices attach to hwloc's OpenFabrics devices by name") {
  const std::string xml =
      testing::SharedDataPath("hwloc/dell-xe8640-4xH100-ndr.flux-ipa20.v2.xml");
  GANTRY_REQUIRE_SHARED_DATA(xml);
  absl::StatusOr<v1::NodeInventory> inv = DiscoverFromHwlocXml(xml);
  REQUIRE(inv.ok());
  const int before = inv->network_devices_size();

  std::vector<v1::NetworkDevice> verbs(2);
  verbs[0].set_name("mlx5_2");
  verbs[0].set_kind("openfabrics");
  verbs[0].set_node_guid("0xa088c2030009704e");
  *verbs[0].add_ports() = TranslatePortAttributes(RecordedPorts()[0].port);
  verbs[1].set_name("mlx5_9");  // not in the hwloc file
  verbs[1].set_kind("openfabrics");
  *verbs[1].add_ports() = TranslatePortAttributes(RecordedPorts()[4].port);
  AttachVerbsDevices(verbs, &*inv);

  REQUIRE(inv->network_devices_size() == before + 1);
  const v1::NetworkDevice* mlx5_2 = nullptr;
  for (const v1::NetworkDevice& dev : inv->network_devices()) {
    if (dev.name() == "mlx5_2") mlx5_2 = &dev;
  }
  REQUIRE(mlx5_2 != nullptr);
  CHECK(mlx5_2->ports_size() == 1);
  CHECK(mlx5_2->ports(0).rate_gbps() == Approx(400));
  CHECK(mlx5_2->pci_bus_id() == "0000:5e:00.0");  // hwloc's, kept
  CHECK(mlx5_2->role() == "compute");
  const v1::NetworkDevice& added = inv->network_devices(before);
  CHECK(added.name() == "mlx5_9");
  CHECK(added.kind() == "openfabrics");
  CHECK(added.numa_node() == -1);
  CHECK(added.role().empty());
  AssignNetworkRoles({}, "", &*inv);
  CHECK(inv->network_devices(before).role() == "storage");
}

int InfinibandSysfsDevices() {
  std::error_code ec;
  int n = 0;
  for (const auto& entry :
       fs::directory_iterator("/sys/class/infiniband", ec)) {
    (void)entry;
    ++n;
  }
  return n;
}

TEST_CASE("DiscoverVerbsDevices on this machine") {
  absl::StatusOr<std::vector<v1::NetworkDevice>> devices =
      DiscoverVerbsDevices();
  INFO(devices.status().ToString());
  REQUIRE(devices.ok());
  // A machine without HCAs (a VM, this build host) has none; a GPU node
  // lists what sysfs lists.
  CHECK(static_cast<int>(devices->size()) == InfinibandSysfsDevices());
  for (const v1::NetworkDevice& dev : *devices) {
    INFO(dev.ShortDebugString());
    CHECK(dev.kind() == "openfabrics");
    for (const v1::HcaPort& port : dev.ports()) {
      CHECK_FALSE(port.state().empty());
      if (port.link_layer() == "InfiniBand") {
        CHECK(port.roce_v2_gid_index() == -1);
      }
    }
  }
}

// The child half of the next test, run in a fresh process (libibverbs reads
// SYSFS_PATH once per process): a private mount namespace with a tmpfs /dev
// holding /dev/infiniband/uverbs0, and a fake sysfs tree naming an mlx5
// device. Hidden ("[.]"): does nothing unless GANTRY_FAKE_SYSFS is set.
TEST_CASE("fake sysfs child", "[.fake_sysfs]") {
  const char* dir = std::getenv("GANTRY_FAKE_SYSFS");
  if (dir == nullptr) return;
  const fs::path root(dir);
  const auto skip = [&](const std::string& why) {
    std::ofstream(root / "skipped") << why;
  };
  if (unshare(CLONE_NEWNS) != 0) return skip("unshare(CLONE_NEWNS) refused");
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
      mount("gantry-test-dev", "/dev", "tmpfs", 0, "mode=0755") != 0) {
    return skip("cannot mount a private tmpfs on /dev");
  }
  fs::create_directories("/dev/infiniband");
  std::ofstream("/dev/infiniband/uverbs0").put('\n');

  const fs::path sys = root / "sys";
  const auto write = [](const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text << "\n";
  };
  write(sys / "class/infiniband_verbs/abi_version", "6");
  write(sys / "class/infiniband_verbs/uverbs0/ibdev", "mlx5_0");
  write(sys / "class/infiniband_verbs/uverbs0/dev", "231:192");
  write(sys / "class/infiniband_verbs/uverbs0/abi_version", "1");
  write(sys / "class/infiniband/mlx5_0/node_type", "1");
  write(sys / "class/infiniband/mlx5_0/node_guid", "e09d:7303:007a:4bd8");
  write(sys / "class/infiniband/mlx5_0/device/modalias",
        "pci:v000015B3d0000101Bsv000015B3sd00000008bc02sc07i00");
  setenv("SYSFS_PATH", sys.c_str(), 1);

  absl::StatusOr<std::vector<v1::NetworkDevice>> devices =
      DiscoverVerbsDevices();
  INFO(devices.status().ToString());
  REQUIRE(devices.ok());
  REQUIRE(devices->size() == 1);
  const v1::NetworkDevice& dev = (*devices)[0];
  CHECK(dev.name() == "mlx5_0");
  CHECK(dev.kind() == "openfabrics");
  CHECK(dev.node_guid() == "0xe09d7303007a4bd8");
  CHECK(dev.ports_size() == 0);  // the fake device cannot be opened
  std::ofstream(root / "passed") << "ok";
}

TEST_CASE("DiscoverVerbsDevices lists a device from a fake sysfs tree") {
  const fs::path dir =
      fs::temp_directory_path() /
      ("gantry_verbs_test_" + std::to_string(static_cast<long>(::getpid())));
  fs::create_directories(dir);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    setenv("GANTRY_FAKE_SYSFS", dir.c_str(), 1);
    execl("/proc/self/exe", "verbs_discovery_test", "[.fake_sysfs]",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  std::string skipped_because;
  if (fs::exists(dir / "skipped")) {
    std::ifstream in(dir / "skipped");
    std::getline(in, skipped_because);
  } else {
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(fs::exists(dir / "passed"));
  }
  fs::remove_all(dir);
  if (!skipped_because.empty()) {
    GANTRY_SKIP(skipped_because << " (needs root or CAP_SYS_ADMIN)");
  }
}

}  // namespace verbs_discovery_test
}  // namespace gantry::agent
