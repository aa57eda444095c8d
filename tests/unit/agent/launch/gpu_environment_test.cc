// GPU visibility variables per vendor (agent/launch/gpu_environment.h), on the
// inventories the agent reads from real servers' hwloc exports.
#include "agent/launch/gpu_environment.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "agent/discovery/node_inventory.h"
#include "tests/unit/support/shared_data.h"

namespace gantry::agent {
namespace gpu_environment_test {

using Env = std::map<std::string, std::string>;

v1::NodeInventory Load(const std::string& file) {
  absl::StatusOr<v1::NodeInventory> inventory =
      DiscoverFromHwlocXml(testing::SharedDataPath("hwloc") + "/" + file);
  INFO(file << ": " << inventory.status().ToString());
  REQUIRE(inventory.ok());
  return *std::move(inventory);
}

TEST_CASE("MI250X GCDs: ROCR selects, HIP and CUDA count from 0") {
  GANTRY_REQUIRE_SHARED_DATA(testing::SharedDataPath("hwloc"));
  const v1::NodeInventory node =
      Load("hpe-ex235a-8xMI250X-gcd-slingshot.mpibind-tioga.v2.xml");
  CHECK(GpuRuntimeEnvironment(node, {4, 5}) ==
        Env{{"ROCR_VISIBLE_DEVICES", "4,5"},
            {"HIP_VISIBLE_DEVICES", "0,1"},
            {"GPU_DEVICE_ORDINAL", "0,1"},
            {"CUDA_VISIBLE_DEVICES", "0,1"}});
  CHECK(GpuRuntimeEnvironment(node, {7}).at("ROCR_VISIBLE_DEVICES") == "7");
  CHECK(GpuRuntimeEnvironment(node, {7}).at("HIP_VISIBLE_DEVICES") == "0");
  // No GPU: an empty ROCR_VISIBLE_DEVICES hides them all.
  CHECK(GpuRuntimeEnvironment(node, {}) == Env{{"ROCR_VISIBLE_DEVICES", ""},
                                               {"HIP_VISIBLE_DEVICES", ""},
                                               {"GPU_DEVICE_ORDINAL", ""},
                                               {"CUDA_VISIBLE_DEVICES", ""}});
}

TEST_CASE("MI300A, SPX and CPX") {
  GANTRY_REQUIRE_SHARED_DATA(testing::SharedDataPath("hwloc"));
  for (const char* file :
       {"hpe-ex255a-4xMI300A-slingshot-SPX.flux-tuo.v2.xml",
        "hpe-ex255a-4xMI300A-slingshot-CPX.flux-tuo.v2.xml"}) {
    INFO(file);
    const Env env = GpuRuntimeEnvironment(Load(file), {1, 2, 3});
    CHECK(env.at("ROCR_VISIBLE_DEVICES") == "1,2,3");
    CHECK(env.at("HIP_VISIBLE_DEVICES") == "0,1,2");
    CHECK(env.at("CUDA_VISIBLE_DEVICES") == "0,1,2");
  }
}

TEST_CASE("NVIDIA nodes: nothing over the controller's variables") {
  GANTRY_REQUIRE_SHARED_DATA(testing::SharedDataPath("hwloc"));
  CHECK(GpuRuntimeEnvironment(Load("dell-xe8640-4xH100-ndr.flux-ipa20.v2.xml"),
                              {2, 3})
            .empty());
  CHECK(GpuRuntimeEnvironment(Load("nvidia-dgx2h-16xV100.hwloc.v2.xml"), {})
            .empty());
}

TEST_CASE("a node with both vendors: each runtime counts its own GPUs") {
  GANTRY_REQUIRE_SHARED_DATA(testing::SharedDataPath("hwloc"));
  // Three Tesla M2075 (GPUs 0-2) and a Radeon HD 7970 (GPU 3, 84:00.1).
  const v1::NodeInventory node =
      Load("supermicro-x9drg-3xM2075-ib-wholeio.hwloc.v2.xml");
  REQUIRE(node.gpus(3).vendor() == "AMD");
  CHECK(GpuRuntimeEnvironment(node, {2, 3}) ==
        Env{{"ROCR_VISIBLE_DEVICES", "0"},
            {"HIP_VISIBLE_DEVICES", "0"},
            {"GPU_DEVICE_ORDINAL", "0"},
            {"CUDA_VISIBLE_DEVICES", "2"}});
  CHECK(GpuRuntimeEnvironment(node, {1}) == Env{{"ROCR_VISIBLE_DEVICES", ""},
                                                {"HIP_VISIBLE_DEVICES", ""},
                                                {"GPU_DEVICE_ORDINAL", ""},
                                                {"CUDA_VISIBLE_DEVICES", "1"}});
}

TEST_CASE("indices the inventory does not list are left out") {
  v1::NodeInventory node;
  for (uint32_t i = 0; i < 2; ++i) {
    v1::GpuInfo* gpu = node.add_gpus();
    gpu->set_index(i);
    gpu->set_vendor("AMD");
  }
  CHECK(GpuRuntimeEnvironment(node, {1, 9}).at("ROCR_VISIBLE_DEVICES") == "1");
  CHECK(GpuRuntimeEnvironment(node, {1, 9}).at("HIP_VISIBLE_DEVICES") == "0");
}

}  // namespace gpu_environment_test
}  // namespace gantry::agent
