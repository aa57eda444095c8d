// GPU locality (PCIe switches, host bridge, package) read from the real
// servers' hwloc exports in ../shared/data/hwloc, checked against the PCI
// trees in those files.
#include "agent/discovery/gpu_locality.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/discovery/node_inventory.h"
#include "tests/unit/support/shared_data.h"

namespace gantry::agent {
namespace gpu_locality_test {

v1::NodeInventory Load(const std::string& file) {
  absl::StatusOr<v1::NodeInventory> inventory =
      DiscoverFromHwlocXml(testing::SharedDataPath("hwloc") + "/" + file);
  INFO(file << ": " << inventory.status().ToString());
  REQUIRE(inventory.ok());
  return *std::move(inventory);
}

// "switches@host_bridge#package" per GPU, switches nearest first.
std::vector<std::string> Places(const v1::NodeInventory& inventory) {
  std::vector<std::string> places;
  for (const v1::GpuInfo& gpu : inventory.gpus()) {
    places.push_back(absl::StrCat(absl::StrJoin(gpu.pcie_switches(), "|"), "@",
                                  gpu.host_bridge(), "#", gpu.package()));
  }
  return places;
}

TEST_CASE("DGX-2H: two GPUs per inner switch, four per outer one") {
  GANTRY_REQUIRE_SHARED_DATA(testing::SharedDataPath("hwloc"));
  const v1::NodeInventory inv = Load("nvidia-dgx2h-16xV100.hwloc.v2.xml");
  const std::vector<std::string> places = Places(inv);
  REQUIRE(places.size() == 16);
  CHECK(places[0] == "0000:32:00.0|0000:2c:00.0@0000:[2b-3b]#0");
  CHECK(places[1] == places[0]);
  CHECK(places[2] == "0000:37:00.0|0000:2c:00.0@0000:[2b-3b]#0");
  CHECK(places[3] == places[2]);
  CHECK(places[7] == "0000:5a:00.0|0000:4f:00.0@0000:[4e-67]#0");
  CHECK(places[8] == "0000:b5:00.0|0000:af:00.0@0000:[ae-c7]#1");
  CHECK(places[15] == "0000:e3:00.0|0000:d8:00.0@0000:[d7-e7]#1");
}

TEST_CASE("GPUs that share an HCA: where they sit") {
  GANTRY_REQUIRE_SHARED_DATA(testing::SharedDataPath("hwloc"));
  // Meluxina: GPUs 0 and 1 share mlx5_0, 2 and 3 mlx5_1; each pair is one
  // package, each GPU behind its own switch and host bridge.
  const v1::NodeInventory meluxina =
      Load("meluxina-gpu-4xA100-2xHDR.psmgmt-mel2001.v1.xml");
  CHECK(Places(meluxina) ==
        std::vector<std::string>{
            "0000:01:00.0@0000:[00-07]#0", "0000:41:00.0@0000:[40-47]#0",
            "0000:81:00.0@0000:[80-87]#1", "0000:c1:00.0@0000:[c0-c8]#1"});
  // Dell XE8640: GPUs 2 and 3 share mlx5_3, in package 1.
  const v1::NodeInventory dell =
      Load("dell-xe8640-4xH100-ndr.flux-ipa20.v2.xml");
  CHECK(Places(dell) ==
        std::vector<std::string>{
            "0000:49:00.0@0000:[48-4e]#0", "0000:5a:00.0@0000:[59-60]#0",
            "0000:c8:00.0@0000:[c7-ce]#1", "0000:d8:00.0@0000:[d7-dd]#1"});
  // AWS g4dn.metal: one EFA for all 8 T4s; pairs on root ports of one host
  // bridge, four per package.
  const std::vector<std::string> aws =
      Places(Load("aws-g4dn.metal-8xT4-efa.mpibind.v2.xml"));
  REQUIRE(aws.size() == 8);
  CHECK(aws[0] == "@0000:[17-19]#0");
  CHECK(aws[1] == aws[0]);
  CHECK(aws[3] == "@0000:[34-36]#0");
  CHECK(aws[7] == "@0000:[f3-f5]#1");
}

TEST_CASE("POWER9: one switch per socket in v2, none visible in v1") {
  GANTRY_REQUIRE_SHARED_DATA(testing::SharedDataPath("hwloc"));
  CHECK(Places(Load("ibm-power9-lassen-4xV100-2xCX5.mpibind.v2.xml")) ==
        std::vector<std::string>{
            "0004:01:00.0@0004:[00-0a]#0", "0004:01:00.0@0004:[00-0a]#0",
            "0035:01:00.0@0035:[00-09]#8", "0035:01:00.0@0035:[00-09]#8"});
  // The v1 file has no bridges between host bridge and GPU; its NUMA nodes
  // stand above the packages, which are found by their CPUs.
  CHECK(Places(Load("ibm-power9-4xV100-2xCX5.flux-sierra.v1.xml")) ==
        std::vector<std::string>{"@0004:[00-0a]#0", "@0004:[00-0a]#0",
                                 "@0035:[00-09]#8", "@0035:[00-09]#8"});
}

TEST_CASE("AMD: every MI250X GCD and MI300A on a root port of its own") {
  GANTRY_REQUIRE_SHARED_DATA(testing::SharedDataPath("hwloc"));
  const v1::NodeInventory mi250x =
      Load("hpe-ex235a-8xMI250X-gcd-slingshot.mpibind-tioga.v2.xml");
  const std::vector<std::string> places = Places(mi250x);
  REQUIRE(places.size() == 8);
  CHECK(places[0] == "@0000:[c0-c1]#0");
  CHECK(places[7] == "@0000:[dc-de]#0");
  CHECK(Places(Load("hpe-ex255a-4xMI300A-slingshot-CPX.flux-tuo.v2.xml")) ==
        std::vector<std::string>{"@0000:[00-02]#0", "@0001:[00-02]#1",
                                 "@0002:[00-02]#2", "@0003:[00-02]#3"});
}

}  // namespace gpu_locality_test
}  // namespace gantry::agent
