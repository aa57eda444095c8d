#include "daemon/scheduler/single_node_fit.h"

#include <tuple>

namespace gantry::scheduler_internal {

std::size_t TightestSingleNode(
    const std::vector<std::vector<std::size_t>>& fitting,
    const std::vector<uint32_t>& leaves, const FreeResources& free,
    const std::vector<NodeSnapshot>& nodes, bool prefer_spares) {
  // Smaller is better, compared in order; the index makes it total.
  using Key = std::tuple<bool, std::size_t, uint32_t, std::size_t, std::size_t>;
  bool found = false;
  Key best;
  std::size_t best_node = 0;
  for (uint32_t leaf : leaves) {
    const std::size_t leaf_room = fitting[leaf].size();
    for (std::size_t i : fitting[leaf]) {
      const Key key{!(prefer_spares && nodes[i].hot_spare), free.gpus[i].size(),
                    free.cpus[i], leaf_room, i};
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
