// What one scheduling pass places jobs on, built once per pass from its
// node snapshots: the fabric index (BuildFabricIndex: leaves, the switch
// groups above them, the fabric's parts) and the free CPUs, memory and GPUs
// as the pass hands them out (FreeResources, with its per-leaf counts).
// Declared in scheduler_placement.h; apart from scheduler_placement.cc,
// which chooses nodes on them.
#include <algorithm>
#include <map>

#include "daemon/scheduler/fabric_parts.h"
#include "daemon/scheduler/scheduler_placement.h"

namespace gantry::scheduler_internal {

FabricIndex BuildFabricIndex(const std::vector<NodeSnapshot>& nodes,
                             UnlistedNodes unlisted) {
  FabricIndex index;
  index.unlisted = unlisted;
  const bool any_in_tree = AnyInTree(nodes);
  std::size_t depth = 1;
  for (const NodeSnapshot& node : nodes) {
    depth = std::max(depth, node.switch_path.size());
  }
  // Switch names at one level are unique across the tree, so a name is a
  // group key; nodes with a shorter path sit under their topmost switch, and
  // nodes outside the tree have a key of their own (fabric_parts.h).
  auto key_at = [any_in_tree](const NodeSnapshot& node, std::size_t level) {
    if (node.switch_path.empty()) return UnlistedKey(node, any_in_tree);
    return node.switch_path[std::min(level, node.switch_path.size() - 1)];
  };
  std::map<std::string, uint32_t> leaf_ids;
  std::vector<std::size_t> first_node_of_leaf;
  index.leaf_of_node.reserve(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    std::string key = key_at(nodes[i], 0);
    // Nodes of a leaf usually come together: skip the map for them.
    if (i > 0 && key == key_at(nodes[i - 1], 0)) {
      index.leaf_of_node.push_back(index.leaf_of_node.back());
      continue;
    }
    auto [it, inserted] = leaf_ids.emplace(
        std::move(key), static_cast<uint32_t>(leaf_ids.size()));
    if (inserted) first_node_of_leaf.push_back(i);
    index.leaf_of_node.push_back(it->second);
  }
  index.leaf_count = static_cast<uint32_t>(leaf_ids.size());
  index.nodes_of_leaf.resize(index.leaf_count);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    index.nodes_of_leaf[index.leaf_of_node[i]].push_back(i);
  }
  for (std::size_t level = 1; level < depth; ++level) {
    std::map<std::string, uint32_t> group_ids;
    std::vector<uint32_t> groups(index.leaf_count);
    for (uint32_t leaf = 0; leaf < index.leaf_count; ++leaf) {
      const NodeSnapshot& node = nodes[first_node_of_leaf[leaf]];
      groups[leaf] = group_ids
                         .emplace(key_at(node, level),
                                  static_cast<uint32_t>(group_ids.size()))
                         .first->second;
    }
    index.group_of_leaf.push_back(std::move(groups));
    index.groups_at_level.push_back(static_cast<uint32_t>(group_ids.size()));
  }
  AddPartLevel(nodes, first_node_of_leaf, any_in_tree, index);
  return index;
}

FreeResources FreeResources::Of(const std::vector<NodeSnapshot>& nodes,
                                const FabricIndex& fabric) {
  FreeResources free;
  free.leaf_of_node_ = &fabric.leaf_of_node;
  for (const NodeSnapshot& node : nodes) {
    free.leaf_buckets_ =
        std::max({free.leaf_buckets_, node.free_gpus.size() + 1,
                  static_cast<std::size_t>(node.gpus_total) + 1});
  }
  free.leaf_nodes_with_free_gpus_.assign(
      static_cast<std::size_t>(fabric.leaf_count) * free.leaf_buckets_, 0);
  free.cpus.reserve(nodes.size());
  free.mem_mb.reserve(nodes.size());
  free.gpus.reserve(nodes.size());
  for (const NodeSnapshot& node : nodes) {
    free.cpus.push_back(node.cpus_free);
    free.mem_mb.push_back(node.mem_free_mb);
    free.gpus.push_back(node.free_gpus);
    const std::size_t count = node.free_gpus.size();
    if (free.nodes_with_free_gpus.size() <= count) {
      free.nodes_with_free_gpus.resize(count + 1, 0);
    }
    ++free.nodes_with_free_gpus[count];
  }
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    ++free.leaf_nodes_with_free_gpus_[fabric.leaf_of_node[i] *
                                          free.leaf_buckets_ +
                                      nodes[i].free_gpus.size()];
  }
  return free;
}

void FreeResources::Take(const NodeShare& share) {
  const std::size_t i = share.node.index();
  MoveInHistogram(gpus[i].size(),
                  gpus[i].size() - std::min(gpus[i].size(), share.gpus.size()));
  cpus[i] -= std::min(cpus[i], share.cpus);
  mem_mb[i] -= std::min(mem_mb[i], share.mem_mb);
  changed_nodes.push_back(i);
  std::vector<uint32_t>& list = gpus[i];
  const std::size_t before = list.size();
  for (uint32_t gpu : share.gpus) {
    auto it = std::lower_bound(list.begin(), list.end(), gpu);
    if (it != list.end() && *it == gpu) list.erase(it);
  }
  MoveInLeafHistogram(i, before, list.size());
}

void FreeResources::MoveInLeafHistogram(std::size_t node, std::size_t from,
                                        std::size_t to) {
  if (from == to) return;
  const std::size_t base = (*leaf_of_node_)[node] * leaf_buckets_;
  --leaf_nodes_with_free_gpus_[base + std::min(from, leaf_buckets_ - 1)];
  ++leaf_nodes_with_free_gpus_[base + std::min(to, leaf_buckets_ - 1)];
}

bool FreeResources::LeafMayHold(uint32_t leaf, uint32_t gpus_per_node) const {
  const uint32_t* counts =
      leaf_nodes_with_free_gpus_.data() + leaf * leaf_buckets_;
  for (std::size_t g = std::min<std::size_t>(gpus_per_node, leaf_buckets_ - 1);
       g < leaf_buckets_; ++g) {
    if (counts[g] > 0) return true;
  }
  return false;
}

void FreeResources::MoveInHistogram(std::size_t from, std::size_t to) {
  if (nodes_with_free_gpus.size() <= std::max(from, to)) {
    nodes_with_free_gpus.resize(std::max(from, to) + 1, 0);
  }
  // Every node is counted, so for schedulable ones this is an upper bound.
  if (nodes_with_free_gpus[from] > 0) --nodes_with_free_gpus[from];
  ++nodes_with_free_gpus[to];
}

bool FreeResources::MayHold(uint32_t nodes, uint32_t gpus_per_node) const {
  std::size_t room = 0;
  for (std::size_t g = gpus_per_node; g < nodes_with_free_gpus.size(); ++g) {
    room += nodes_with_free_gpus[g];
  }
  return room >= nodes;
}

void FreeResources::Return(const NodeShare& share) {
  const std::size_t i = share.node.index();
  MoveInHistogram(gpus[i].size(), gpus[i].size() + share.gpus.size());
  cpus[i] += share.cpus;
  mem_mb[i] += share.mem_mb;
  changed_nodes.push_back(i);
  std::vector<uint32_t>& list = gpus[i];
  const std::size_t before = list.size();
  for (uint32_t gpu : share.gpus) {
    auto it = std::lower_bound(list.begin(), list.end(), gpu);
    if (it == list.end() || *it != gpu) list.insert(it, gpu);
  }
  MoveInLeafHistogram(i, before, list.size());
}

}  // namespace gantry::scheduler_internal
