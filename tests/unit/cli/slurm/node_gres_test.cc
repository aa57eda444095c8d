// sinfo %G and scontrol's Gres= of a node: GPUs counted by the types that
// select them.

#include "cli/slurm/node_gres.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace gantry::cli {
namespace node_gres_test {

v1::NodeInventory WithGpus(const std::vector<std::string>& models) {
  v1::NodeInventory inventory;
  for (const std::string& model : models) {
    inventory.add_gpus()->set_model(model);
  }
  return inventory;
}

TEST_CASE("a node's Gres names its GPUs' types") {
  CHECK(NodeGres(v1::NodeInventory()) == "(null)");
  CHECK(NodeGres(WithGpus(std::vector<std::string>(
            4, "NVIDIA H100 80GB HBM3"))) == "gpu:h100:4");
  CHECK(NodeGres(WithGpus(std::vector<std::string>(
            4, "GA100 [A100 SXM4 40GB]"))) == "gpu:a100:4");
  // The Supermicro server of ../shared/data/hwloc, in PCI order.
  CHECK(NodeGres(
            WithGpus({"Tesla M2075 Dual-Slot Computing Processor Module",
                      "Tesla M2075 Dual-Slot Computing Processor Module",
                      "Tesla K40m", "AMD Radeon R9 200 / HD 7900 Series"})) ==
        "gpu:m2075:2,gpu:k40m:1,gpu:r9:1");
  // GPUs nothing named, or with no model at all, have no type.
  CHECK(NodeGres(WithGpus({"PCI 10de:20b0", "PCI 10de:20b0"})) == "gpu:2");
  CHECK(NodeGres(WithGpus({""})) == "gpu:1");
}

}  // namespace node_gres_test
}  // namespace gantry::cli
