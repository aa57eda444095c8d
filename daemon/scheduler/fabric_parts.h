// Connected parts of the fabric, and nodes missing from the imported switch
// tree: the rules the placer (scheduler_placement.h) keeps, and what
// gantryd checks at submit and `gantry topology` shows. Pure; thread-safe
// (no state beyond a PartTally, which is a plain value).
//
// The rules:
// - A job never spans two parts of the fabric that no switch joins (Slurm's
//   "disconnected trunks": top switches with no common parent). As Slurm's
//   topology.conf(5) says, jobs only span nodes of the same switch fabric,
//   even when idle nodes elsewhere would make up the count. A job bigger
//   than every part is refused at submit (or waits PartitionNodeLimit when
//   the cluster changed after it was queued). Restarts (hot spares
//   included), backfill reservations and the trace simulator place through
//   the same placer, so they keep the rule too; gantryd grows an --elastic
//   job only with nodes of its own part (features/elastic/).
// - Nodes outside an imported tree ("unlisted") have no known place in the
//   fabric. They are not one leaf: they form a part of their own in which
//   each node is its own leaf switch. So a gang never mixes listed and
//   unlisted nodes (nothing says they reach each other), a gang on several
//   unlisted nodes counts one leaf switch per node (--switches), and such
//   a placement ranks below any on listed nodes. What they take is
//   gantryd's --unlisted-nodes (UnlistedNodes):
//     last   (default) any job, but only when no placement on listed nodes
//            fits it now; single-node jobs too, since an unlisted node may
//            be one that is not on the fabric at all, and listed nodes are
//            the ones the admin vouched for. Nothing is lost: a full
//            cluster still runs single-node jobs on them.
//     single single-node jobs only (and last): nodes that are off the
//            fabric, e.g. Ethernet-only servers beside an InfiniBand tree.
//     never  no job, as Slurm's tree plugin ("switches lack access to N
//            nodes").
//   With no tree imported there are no unlisted nodes: the cluster is one
//   flat leaf, as before.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/topology.h"
#include "daemon/scheduler/scheduler_types.h"

namespace gantry {

// "last", "single", "never". INVALID_ARGUMENT for anything else.
absl::StatusOr<UnlistedNodes> ParseUnlistedNodes(std::string_view text);
const char* UnlistedNodesName(UnlistedNodes policy);

// Whether unlisted nodes may take a job of `job_nodes` nodes.
bool UnlistedNodesServe(UnlistedNodes policy, uint32_t job_nodes);

// The node's place in `tree`: its switch path (leaf first, then the first
// parent of each switch) and the name of its part; both empty for a node
// the tree does not list.
void SetFabricPlace(const Topology& tree, NodeSnapshot& node);
// Only the part's name ("" for a node the tree does not list).
std::string FabricPartName(const Topology& tree, std::string_view node);

// The part a node is in: fabric_part, else the last switch of its path;
// empty for a node in no tree.
std::string_view FabricPartOf(const NodeSnapshot& node);

// Nodes that could hold a job, counted by part: how many one part offers.
class PartTally {
 public:
  // `part` as FabricPartOf gives it ("" for a node in no tree).
  void Add(std::string_view part);
  std::size_t Total() const { return total_; }
  // The most nodes of one part that may take a job of `job_nodes` nodes;
  // unlisted ones (no part, beside nodes with one) only as `policy` lets.
  std::size_t Largest(UnlistedNodes policy, uint32_t job_nodes) const;
  // Why fewer than Total() serve a job of `job_nodes` nodes, to follow
  // "partition P has N such node(s)": "; at most 16 of them in one
  // connected part of the fabric (no switch joins spineA, spineB, leafC)",
  // and/or what the unlisted rule left out. Empty when nothing was.
  std::string LimitNote(UnlistedNodes policy, uint32_t job_nodes) const;

 private:
  bool HasTree() const;
  std::map<std::string, std::size_t, std::less<>> by_part_;  // "": unlisted
  std::size_t total_ = 0;
};

namespace scheduler_internal {

struct FabricIndex;

// Whether any node has a switch path: only then are empty ones unlisted.
bool AnyInTree(const std::vector<NodeSnapshot>& nodes);

// The key of an unlisted node's own leaf (and group at every level); ""
// (one flat leaf for all) when there is no tree.
std::string UnlistedKey(const NodeSnapshot& node, bool any_in_tree);

// The index's top level: one group per part (leaf `l` of the index has
// nodes[first_node_of_leaf[l]] on it), with part_of_leaf, part_names and
// unlisted_part.
void AddPartLevel(const std::vector<NodeSnapshot>& nodes,
                  const std::vector<std::size_t>& first_node_of_leaf,
                  bool any_in_tree, FabricIndex& index);

}  // namespace scheduler_internal
}  // namespace gantry
