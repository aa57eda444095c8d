#include "daemon/scheduler/single_node_fit.h"

#include <tuple>

namespace gantry::scheduler_internal {
namespace {

bool Idle(std::size_t i, const NodeSnapshot& node, const FreeResources& free) {
  return free.gpus[i].size() == node.gpus_total &&
         free.cpus[i] == node.cpus_total && free.mem_mb[i] == node.mem_total_mb;
}

}  // namespace

std::size_t ChooseSingleNode(
    const std::vector<std::vector<std::size_t>>& fitting,
    const std::vector<uint32_t>& leaves, const FreeResources& free,
    const std::vector<NodeSnapshot>& nodes, bool prefer_spares) {
  // Idle fitting nodes per leaf (in `leaves` order), and whether a node in
  // use fits at all.
  std::vector<std::size_t> idle_on_leaf(leaves.size(), 0);
  bool used_node_fits = false;
  for (std::size_t k = 0; k < leaves.size(); ++k) {
    for (std::size_t i : fitting[leaves[k]]) {
      if (Idle(i, nodes[i], free)) {
        ++idle_on_leaf[k];
      } else {
        used_node_fits = true;
      }
    }
  }
  // Smaller is better, compared in order (the rules in the header); the
  // index last makes it total.
  using Key = std::tuple<bool, bool, bool, std::size_t, std::size_t, uint32_t,
                         std::size_t, std::size_t>;
  bool found = false;
  Key best;
  std::size_t best_node = 0;
  for (std::size_t k = 0; k < leaves.size(); ++k) {
    const std::vector<std::size_t>& on_leaf = fitting[leaves[k]];
    for (std::size_t i : on_leaf) {
      const Key key{!(prefer_spares && nodes[i].hot_spare),
                    used_node_fits && Idle(i, nodes[i], free),
                    idle_on_leaf[k] > 0,
                    free.gpus[i].size(),
                    idle_on_leaf[k],
                    free.cpus[i],
                    on_leaf.size(),
                    i};
      if (!found || key < best) {
        found = true;
        best = key;
        best_node = i;
      }
    }
  }
  return best_node;
}

}  // namespace gantry::scheduler_internal
