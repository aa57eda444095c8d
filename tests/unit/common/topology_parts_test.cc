// Connected parts of an imported switch tree (Topology::parts, PartOf) on
// Slurm's own test topologies and a real fabric dump from
// ../shared/data/fabric, and on small specs for the edge cases: a node
// hanging from two parts (one fabric per rail) joins them.
#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/hostlist.h"
#include "common/ibnetdiscover_parser.h"
#include "common/topology.h"
#include "tests/unit/support/shared_data.h"
#include "tests/unit/support/slurm_topology_data.h"

namespace gantry {
namespace topology_parts_test {

TEST_CASE("Slurm's disconnected trunks are three parts",
          "[topology][parts][shared_data]") {
  LOAD_SLURM_TREE_OR_SKIP(tree,
                          "slurm-test133-disconnected-trunks.topology.conf");
  REQUIRE(tree.parts().size() == 3);
  CHECK(tree.parts()[0].name() == "spineA");
  CHECK(tree.parts()[0].tops == std::vector<std::string>{"spineA"});
  CHECK(CompressHostlist(tree.parts()[0].nodes) == "node[1-16]");
  CHECK(tree.parts()[1].name() == "spineB");
  CHECK(CompressHostlist(tree.parts()[1].nodes) == "node[17-32]");
  CHECK(tree.parts()[2].name() == "leafC");
  CHECK(CompressHostlist(tree.parts()[2].nodes) == "node[33-40]");
  CHECK(tree.PartOf("node1") == 0);
  CHECK(tree.PartOf("node16") == 0);
  CHECK(tree.PartOf("node17") == 1);
  CHECK(tree.PartOf("node40") == 2);
  CHECK(tree.PartOf("node41") == -1);
  // The parts agree with distances: none between them.
  CHECK(tree.Distance("node1", "node9") == 4);
  CHECK_FALSE(tree.Distance("node1", "node17").has_value());
  CHECK_FALSE(tree.Distance("node17", "node33").has_value());
}

TEST_CASE("a rooted tree is one part", "[topology][parts][shared_data]") {
  LOAD_SLURM_TREE_OR_SKIP(ten_thousand,
                          "slurm-test133-10k-nodes-3level-tree.topology.conf");
  REQUIRE(ten_thousand.parts().size() == 1);
  CHECK(ten_thousand.parts()[0].nodes.size() == 10000);
  CHECK(ten_thousand.parts()[0].tops.size() == 1);
  LOAD_SLURM_TREE_OR_SKIP(topograph, "topograph-expected-tree.topology.conf");
  REQUIRE(topograph.parts().size() == 1);
  CHECK(topograph.parts()[0].name() == "switch.3.1");
  CHECK(topograph.parts()[0].nodes.size() == 96);
}

TEST_CASE("a real InfiniBand fabric dump is one part with its spines on top",
          "[topology][parts][shared_data]") {
  const std::string path = testing::SharedDataPath(
      "fabric/ibnetdiscover/topograph-dgx-h100-ndr-superpod.ibnetdiscover.out");
  GANTRY_REQUIRE_SHARED_DATA(path);
  absl::StatusOr<Fabric> fabric = LoadIbnetdiscoverFile(path);
  REQUIRE(fabric.ok());
  absl::StatusOr<FabricTopology> built = BuildFabricTopology(*fabric, {});
  REQUIRE(built.ok());
  const Topology& tree = built->topology;
  REQUIRE(tree.parts().size() == 1);
  // Undirected cables: the nine spines are the top, none above another.
  CHECK(tree.parts()[0].tops.size() == 9);
  for (const std::string& top : tree.parts()[0].tops) {
    CHECK(top.find("IBSPINE") != std::string::npos);
  }
  CHECK(tree.parts()[0].nodes.size() == tree.nodes().size());
}

TEST_CASE("a node on two rails joins their fabrics into one part",
          "[topology][parts]") {
  TopologySpec spec;
  spec.allow_multi_homed_nodes = true;
  for (const char* name : {"rail0", "rail1", "lone"}) {
    spec.switches.emplace_back();
    spec.switches.back().name = name;
  }
  const std::pair<const char*, const char*> attached[] = {
      {"a", "rail0"}, {"a", "rail1"}, {"b", "rail1"}, {"c", "lone"}};
  for (const auto& [node, leaf] : attached) {
    spec.attachments.emplace_back();
    spec.attachments.back().node = node;
    spec.attachments.back().switch_name = leaf;
  }
  absl::StatusOr<Topology> tree = Topology::Build(spec);
  REQUIRE(tree.ok());
  REQUIRE(tree->parts().size() == 2);
  CHECK(tree->parts()[0].tops == std::vector<std::string>{"rail0", "rail1"});
  CHECK(tree->parts()[0].nodes == std::vector<std::string>{"a", "b"});
  CHECK(tree->parts()[1].nodes == std::vector<std::string>{"c"});
  CHECK(tree->PartOf("b") == tree->PartOf("a"));
  CHECK(tree->PartOf("c") == 1);
}

TEST_CASE("an empty topology has no parts", "[topology][parts]") {
  const Topology empty;
  CHECK(empty.parts().empty());
  CHECK(empty.PartOf("node1") == -1);
}

}  // namespace topology_parts_test
}  // namespace gantry
