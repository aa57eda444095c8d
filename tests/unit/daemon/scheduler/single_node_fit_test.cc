// ChooseSingleNode: the order of its rules, each shown by a pair of nodes
// that only that rule tells apart.
#include "daemon/scheduler/single_node_fit.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace gantry::scheduler_internal {
namespace single_node_fit_test {

// Nodes of 8 GPUs and 64 CPUs, `per_leaf` under each leaf; `used[i]` GPUs
// (and 8 CPUs per GPU) of node i are taken.
std::vector<NodeSnapshot> Cluster(const std::vector<uint32_t>& used,
                                  std::size_t per_leaf) {
  std::vector<NodeSnapshot> nodes(used.size());
  for (std::size_t i = 0; i < used.size(); ++i) {
    NodeSnapshot& n = nodes[i];
    n.name = "n" + std::to_string(i);
    n.gpus_total = 8;
    n.cpus_total = 64;
    n.cpus_free = 64 - 8 * used[i];
    for (uint32_t g = used[i]; g < 8; ++g) n.free_gpus.push_back(g);
    n.mem_total_mb = n.mem_free_mb = 1000;
    n.switch_path = {"leaf" + std::to_string(i / per_leaf), "spine"};
  }
  return nodes;
}

// What PlaceByTopology hands over: every node fits (the job needs a GPU and
// these all have one free, or are listed as fitting by the test).
std::size_t Choose(const std::vector<NodeSnapshot>& nodes,
                   bool prefer_spares = false) {
  const FabricIndex fabric = BuildFabricIndex(nodes);
  const FreeResources free = FreeResources::Of(nodes, fabric);
  std::vector<std::vector<std::size_t>> fitting(fabric.leaf_count);
  std::vector<uint32_t> leaves;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].free_gpus.empty()) continue;
    const uint32_t leaf = fabric.leaf_of_node[i];
    if (fitting[leaf].empty()) leaves.push_back(leaf);
    fitting[leaf].push_back(i);
  }
  return ChooseSingleNode(fitting, leaves, free, nodes, prefer_spares);
}

TEST_CASE("A used node is taken before an idle one, however loose") {
  // Leaf 0: idle n0 and busy n1 (one fitting node); leaf 1: n2 with one GPU
  // free, n3 with six.
  CHECK(Choose(Cluster({0, 8, 7, 2}, 2)) == 2);
  // Only idle nodes fit: the one on the leaf with the fewest idle nodes.
  CHECK(Choose(Cluster({0, 0, 0, 8}, 2)) == 2);
}

TEST_CASE("A leaf with no idle node goes before one with some") {
  // Leaf 0: n0 with one GPU free beside idle n1; leaf 1: n2 with three
  // free beside busy n3. Best fit alone would take n0.
  CHECK(Choose(Cluster({7, 0, 5, 8}, 2)) == 2);
}

TEST_CASE("Then the fewest free GPUs, then the fewest free CPUs") {
  CHECK(Choose(Cluster({5, 7, 6, 8}, 2)) == 1);
  std::vector<NodeSnapshot> nodes = Cluster({7, 7, 8, 8}, 2);
  nodes[1].cpus_free = 2;  // the same free GPUs, fewer CPUs
  CHECK(Choose(nodes) == 1);
}

TEST_CASE("A restart's hot spare comes first, idle or not") {
  std::vector<NodeSnapshot> nodes = Cluster({7, 0, 8, 8}, 2);
  nodes[1].hot_spare = true;
  CHECK(Choose(nodes, true) == 1);
  CHECK(Choose(nodes, false) == 0);
}

}  // namespace single_node_fit_test
}  // namespace gantry::scheduler_internal
