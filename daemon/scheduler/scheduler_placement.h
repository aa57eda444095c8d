// Gang placement for one job on the free resources of one scheduling pass:
// the fabric index (leaves and the switch groups above them), the free
// CPUs/GPUs/memory as the pass hands them out, and the topology-aware choice
// of nodes and of GPUs on each node. Internal to the scheduler core
// (daemon/scheduler/scheduler.cc); pure and single-threaded. The fabric
// index and the free resources are defined in pass_resources.cc, the
// choice in scheduler_placement.cc (and fabric_parts.cc).
#pragma once

#include <compare>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "daemon/scheduler/scheduler_types.h"

namespace gantry::scheduler_internal {

inline constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

// Leaves and switch groups, built once per pass. Level 0 is the leaf; the
// last level groups the leaves by connected part of the fabric (for a
// connected fabric, one group: a virtual root, so a job that fits only
// across spines still has a level to land on). No job spans two groups of
// the last level (fabric_parts.h).
struct FabricIndex {
  std::vector<uint32_t> leaf_of_node;
  std::vector<std::vector<std::size_t>> nodes_of_leaf;  // ascending
  uint32_t leaf_count = 0;
  // group_of_leaf[level][leaf], for levels 1..; group ids are dense per level.
  std::vector<std::vector<uint32_t>> group_of_leaf;
  std::vector<uint32_t> groups_at_level;
  // The part of each leaf (the last level's group), the parts' names (""
  // for the unlisted nodes' part) and that part's number, kNoPart when no
  // node is unlisted.
  static constexpr uint32_t kNoPart = 0xFFFFFFFF;
  std::vector<uint32_t> part_of_leaf;
  std::vector<std::string> part_names;
  uint32_t unlisted_part = kNoPart;
  UnlistedNodes unlisted = UnlistedNodes::kLast;
  bool IsUnlisted(uint32_t leaf) const {
    return part_of_leaf[leaf] == unlisted_part;
  }
};

FabricIndex BuildFabricIndex(const std::vector<NodeSnapshot>& nodes,
                             UnlistedNodes unlisted = UnlistedNodes::kLast);

// What is still free while a pass hands resources out.
struct FreeResources {
  std::vector<uint32_t> cpus;
  std::vector<uint64_t> mem_mb;
  std::vector<std::vector<uint32_t>> gpus;  // ascending indices
  // Nodes by free GPU count, for a quick "not enough room anywhere".
  std::vector<std::size_t> nodes_with_free_gpus;
  // Every node Take or Return touched, in order: what a placer that keeps
  // fitting sets across calls must look at again.
  std::vector<std::size_t> changed_nodes;

  static FreeResources Of(const std::vector<NodeSnapshot>& nodes,
                          const FabricIndex& fabric);
  void Take(const NodeShare& share);
  void Return(const NodeShare& share);
  // False when fewer than `nodes` nodes have that many GPUs free.
  bool MayHold(uint32_t nodes, uint32_t gpus_per_node) const;
  // False when no node of the leaf has that many GPUs free, so a job that
  // needs them need not look at the leaf.
  bool LeafMayHold(uint32_t leaf, uint32_t gpus_per_node) const;

 private:
  void MoveInHistogram(std::size_t from, std::size_t to);
  void MoveInLeafHistogram(std::size_t node, std::size_t from, std::size_t to);

  // Per leaf, nodes by free GPU count (the last bucket also holds nodes with
  // more): leaf_nodes_with_free_gpus_[leaf * leaf_buckets_ + count].
  const std::vector<uint32_t>* leaf_of_node_ = nullptr;
  std::size_t leaf_buckets_ = 1;
  std::vector<uint32_t> leaf_nodes_with_free_gpus_;
};

// Which nodes a job may use beyond fitting: reservations of EASY backfill.
// A node reserved from time T serves only jobs that end by T.
struct NodeFilter {
  const std::vector<int64_t>* reserved_from = nullptr;  // per node; kNever
  int64_t job_end_ms = kNever;
  bool Allows(std::size_t node) const {
    return reserved_from == nullptr || job_end_ms <= (*reserved_from)[node];
  }
};

enum class PlacementOutcome {
  kPlaced,
  kNoRoom,       // not enough fitting nodes now
  kSwitchLimit,  // room, but not within the job's --switches limit
};

struct Placement {
  PlacementOutcome outcome = PlacementOutcome::kNoRoom;
  std::vector<std::size_t> nodes;  // rank order (grouped by leaf)
  uint32_t leaf_switches = 0;
};

struct PlacementRequest {
  const PendingJob* job = nullptr;
  bool topology_aware = true;
  bool enforce_switch_limit = false;
  NodeFilter filter;
  // The free resources are the pass's own, changed only through Take and
  // Return, and the filter's reservations are unchanged since the last
  // ForgetFittingSets: the placer may reuse what it found fitting before.
  bool live = false;
  // The job's partition as a number, the same for the same name throughout
  // the Placer's life: what the placer keys its per-partition memos on.
  uint32_t partition = 0;
};

// Reused buffers so that a pass over many jobs allocates little.
class Placer {
 public:
  Placer(const std::vector<NodeSnapshot>& nodes, const FabricIndex& fabric)
      : nodes_(nodes), fabric_(fabric) {}

  Placement Place(const PlacementRequest& request, const FreeResources& free);

  // Nodes of the job's partition it could use if they were idle; `partition`
  // as in PlacementRequest. With `up_only`, only those that are up now
  // (schedulable: not down, drained or unreachable).
  std::size_t CapableNodes(const PendingJob& job, uint32_t partition,
                           bool up_only = false);

  // Drops the fitting sets of live requests (call when reservations change).
  void ForgetFittingSets() { fitting_sets_.clear(); }

  // "partition P has N such node(s)" for a job CapableNodes found
  // `capable` nodes for, with what narrowed them below the partition's
  // (connected parts, unlisted nodes, --nodelist across parts)
  // (fabric_parts.cc).
  std::string CapableText(const PendingJob& job, uint32_t partition,
                          std::size_t capable);

 private:
  bool Fits(std::size_t node, const PendingJob& job,
            const FreeResources& free) const;
  // Per node: schedulable and usable by jobs like `job` (UsableBy).
  const std::vector<uint8_t>& UsableMask(const PendingJob& job,
                                         uint32_t partition);
  // Per node: UsableBy alone (no schedulable test).
  const std::vector<uint8_t>& UsableByMask(const PendingJob& job,
                                           uint32_t partition);
  // Per node: usable by a job with node restrictions under one choice of
  // its matching-OR group: UsableBy, not excluded, the constraint holds
  // and, with `schedulable_only`, schedulable.
  void BuildRestrictedMask(const PendingJob& job, std::size_t choice,
                           bool schedulable_only,
                           std::vector<uint8_t>& mask) const;
  // The snapshot indices of the job's --nodelist nodes, in its order;
  // false when one is not in the snapshot.
  bool FindRequiredNodes(const PendingJob& job,
                         std::vector<std::size_t>& indices) const;
  Placement PlaceRestricted(const PlacementRequest& request,
                            const FreeResources& free);
  // Which leaves a placement may use: listed ones (all, when no node is
  // unlisted) or the unlisted ones, never both (fabric_parts.h).
  enum class LeafScope { kListed, kUnlisted };
  bool InScope(uint32_t leaf, LeafScope scope) const {
    return fabric_.IsUnlisted(leaf) == (scope == LeafScope::kUnlisted);
  }
  // On listed leaves, else (as the unlisted rule lets) on unlisted ones, by
  // topology or first fit (fabric_parts.cc).
  Placement PlaceOnFabric(const PlacementRequest& request,
                          const FreeResources& free, bool spares_only);
  Placement PlaceFirstFit(const PlacementRequest& request,
                          const FreeResources& free, bool spares_only,
                          LeafScope scope);
  // `placement` (chosen from `fitting` on `leaves`), or where the job's
  // datasets are cached at no worse span (cache_preference.h).
  Placement PreferCached(const PendingJob& job, const FreeResources& free,
                         const std::vector<std::vector<std::size_t>>& fitting,
                         const std::vector<uint32_t>& leaves,
                         uint32_t max_leaves, Placement placement);
  Placement PlaceByTopology(const PlacementRequest& request,
                            const FreeResources& free, bool spares_only,
                            LeafScope scope);
  // The most nodes of one part that `capable` admits and the unlisted rule
  // lets the job use; with `required` (--nodelist) only their part, and 0
  // when they are in several (fabric_parts.cc).
  std::size_t CountCapableInPart(const PendingJob& job,
                                 const std::vector<std::size_t>& required,
                                 absl::FunctionRef<bool(std::size_t)> capable);
  uint32_t PartOfNode(std::size_t node) const {
    return fabric_.part_of_leaf[fabric_.leaf_of_node[node]];
  }
  uint32_t CountLeaves(const std::vector<std::size_t>& chosen) const;
  // How far a set of nodes reaches into the fabric: the lowest switch level
  // that joins them all (0: one leaf), then the leaves they are on. Less is
  // better, compared in that order.
  struct Span {
    uint32_t unlisted = 0;  // 1: on unlisted nodes, worse than any other
    uint32_t level = 0;
    uint32_t leaves = 0;
    // clang-tidy 14 reads the defaulted comparison as a 0 for a pointer.
    // NOLINTNEXTLINE(modernize-use-nullptr)
    auto operator<=>(const Span&) const = default;
  };
  Span SpanOf(const std::vector<std::size_t>& chosen) const;

  // Fitting nodes by leaf (ascending) for one kind of live request, brought
  // up to date with the nodes changed since it was last used.
  struct FittingSet {
    std::vector<std::vector<std::size_t>> by_leaf;
    std::size_t total = 0;
    std::size_t changes_seen = 0;
  };
  using FittingKey = std::tuple<uint32_t, uint32_t, uint64_t, bool, bool, bool,
                                bool, int64_t, uint32_t>;
  const FittingSet& LiveFittingSet(const PlacementRequest& request,
                                   const FreeResources& free, bool spares_only);
  bool FitsRequest(std::size_t node, const PlacementRequest& request,
                   const FreeResources& free, bool spares_only) const;

  const std::vector<NodeSnapshot>& nodes_;
  const FabricIndex& fabric_;
  std::vector<std::vector<std::size_t>> fitting_by_leaf_;
  std::vector<uint32_t> touched_leaves_;
  std::vector<uint32_t> leaf_stamp_;
  uint32_t stamp_ = 0;
  // By partition number * 2 + restart; built when first needed.
  std::vector<std::vector<uint8_t>> usable_masks_;
  std::vector<uint8_t> usable_mask_built_;
  // The same without the schedulable test (UsableBy alone), for CapableNodes.
  std::vector<std::vector<uint8_t>> usable_by_;
  std::vector<uint8_t> usable_by_built_;
  const std::vector<uint8_t>* usable_ = nullptr;  // of the job being placed
  std::vector<uint8_t> restricted_mask_;          // see BuildRestrictedMask
  std::map<FittingKey, FittingSet> fitting_sets_;
  std::vector<std::size_t> candidates_;
  std::vector<std::vector<std::size_t>> fit_by_part_;  // for PlaceFirstFit
  std::vector<std::size_t> capable_by_part_;           // for CountCapableInPart
};

// Whether the node has GPUs of this type (lower case): a GPU of that type,
// a GPU model having it as whole words, or a feature of that name.
bool HasGpuType(const NodeSnapshot& node, const std::string& type);

// Whether the job could ever use this node (partition, spare rule, size).
bool CapableOf(const NodeSnapshot& node, const PendingJob& job);
bool UsableBy(const NodeSnapshot& node, const PendingJob& job);
uint32_t CpusNeeded(const PendingJob& job);

// The share of one node the job takes: CPUs and memory (all of them when
// exclusive) and GPUs as gpu_choice.h picks them (spread over distinct HCAs
// for a job on several nodes, packed close together for one on one node).
NodeShare ShareOn(std::size_t node_index, const NodeSnapshot& node,
                  const PendingJob& job, const FreeResources& free);

// GPUs from `free_gpus` (ascending) chosen so that as many distinct HCAs as
// possible serve them, lower indices first; the result is ascending.
std::vector<uint32_t> ChooseGpus(const std::vector<uint32_t>& free_gpus,
                                 const std::vector<std::string>& gpu_hca,
                                 uint32_t count);

}  // namespace gantry::scheduler_internal
