#include "daemon/scheduler/scheduler_placement.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <string_view>

#include "absl/strings/match.h"
#include "common/gpu_type.h"
#include "daemon/scheduler/cache_preference.h"
#include "daemon/scheduler/fabric_parts.h"
#include "daemon/scheduler/gpu_choice.h"
#include "daemon/scheduler/single_node_fit.h"

namespace gantry::scheduler_internal {

uint32_t CpusNeeded(const PendingJob& job) {
  return job.max_tasks_per_node * job.cpus_per_task;
}

bool UsableBy(const NodeSnapshot& node, const PendingJob& job) {
  return (!node.hot_spare || job.is_restart) &&
         std::find(node.partitions.begin(), node.partitions.end(),
                   job.partition) != node.partitions.end();
}

bool CapableOf(const NodeSnapshot& node, const PendingJob& job) {
  return UsableBy(node, job) && node.cpus_total >= CpusNeeded(job) &&
         node.gpus_total >= job.gpus_per_node &&
         (job.mem_per_node_mb == 0 || node.mem_total_mb >= job.mem_per_node_mb);
}

const std::vector<uint8_t>& Placer::UsableByMask(const PendingJob& job,
                                                 uint32_t partition) {
  const std::size_t slot = std::size_t{partition} * 2 + job.is_restart;
  if (usable_by_.size() <= slot) {
    usable_by_.resize(slot + 1);
    usable_by_built_.resize(slot + 1, 0);
  }
  std::vector<uint8_t>& usable = usable_by_[slot];
  if (!usable_by_built_[slot]) {
    usable_by_built_[slot] = 1;
    usable.reserve(nodes_.size());
    for (const NodeSnapshot& node : nodes_) {
      usable.push_back(UsableBy(node, job));
    }
  }
  return usable;
}

bool HasGpuType(const NodeSnapshot& node, const std::string& type) {
  for (const std::string& gpu_type : node.gpu_types) {
    if (gpu_type == type) return true;
  }
  for (const std::string& model : node.gpu_models) {
    if (TypeIsWordsOfModel(model, type)) return true;
  }
  for (const std::string& feature : node.features) {
    if (absl::EqualsIgnoreCase(feature, type)) return true;
  }
  return false;
}

void Placer::BuildRestrictedMask(const PendingJob& job, std::size_t choice,
                                 bool schedulable_only,
                                 std::vector<uint8_t>& mask) const {
  mask.assign(nodes_.size(), 0);
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const NodeSnapshot& node = nodes_[i];
    if ((schedulable_only && !node.schedulable) || !UsableBy(node, job)) {
      continue;
    }
    if (std::find(job.excluded_nodes.begin(), job.excluded_nodes.end(),
                  node.name) != job.excluded_nodes.end()) {
      continue;
    }
    if (job.constraint && !job.constraint->Matches(node.features, choice)) {
      continue;
    }
    if (!job.gpu_type.empty() && !HasGpuType(node, job.gpu_type)) continue;
    mask[i] = 1;
  }
}

bool Placer::FindRequiredNodes(const PendingJob& job,
                               std::vector<std::size_t>& indices) const {
  indices.clear();
  for (const std::string& name : job.required_nodes) {
    auto it = std::find_if(
        nodes_.begin(), nodes_.end(),
        [&](const NodeSnapshot& node) { return node.name == name; });
    if (it == nodes_.end()) return false;
    indices.push_back(static_cast<std::size_t>(it - nodes_.begin()));
  }
  return true;
}

std::size_t Placer::CapableNodes(const PendingJob& job, uint32_t partition,
                                 bool up_only) {
  const auto up = [&](std::size_t i) {
    return !up_only || nodes_[i].schedulable;
  };
  if (job.HasNodeRestrictions()) {
    // The best choice of the matching-OR group; none when a listed node
    // could never hold the job.
    std::vector<std::size_t> required;
    if (!FindRequiredNodes(job, required)) return 0;
    std::size_t best = 0;
    const std::size_t choices =
        job.constraint ? job.constraint->ChoiceCount() : 1;
    for (std::size_t choice = 0; choice < choices; ++choice) {
      BuildRestrictedMask(job, choice, false, restricted_mask_);
      const std::size_t count =
          CountCapableInPart(job, required, [&](std::size_t i) {
            return restricted_mask_[i] && CapableOf(nodes_[i], job) && up(i);
          });
      const bool listed_capable =
          std::all_of(required.begin(), required.end(), [&](std::size_t i) {
            return restricted_mask_[i] && CapableOf(nodes_[i], job) && up(i);
          });
      if (listed_capable) best = std::max(best, count);
    }
    return best;
  }
  const std::vector<uint8_t>& usable =
      up_only ? UsableMask(job, partition) : UsableByMask(job, partition);
  // CapableOf, with UsableBy (and schedulable) answered from the mask.
  const uint32_t cpus = CpusNeeded(job);
  return CountCapableInPart(job, {}, [&](std::size_t i) {
    const NodeSnapshot& node = nodes_[i];
    return usable[i] && node.cpus_total >= cpus &&
           node.gpus_total >= job.gpus_per_node &&
           (job.mem_per_node_mb == 0 ||
            node.mem_total_mb >= job.mem_per_node_mb);
  });
}

bool Placer::Fits(std::size_t i, const PendingJob& job,
                  const FreeResources& free) const {
  const NodeSnapshot& node = nodes_[i];
  if (!(*usable_)[i] || free.gpus[i].size() < job.gpus_per_node ||
      free.cpus[i] < CpusNeeded(job) ||
      (job.mem_per_node_mb != 0 && free.mem_mb[i] < job.mem_per_node_mb)) {
    return false;
  }
  if (job.exclusive && (free.cpus[i] != node.cpus_total ||
                        free.gpus[i].size() != node.gpus_total ||
                        free.mem_mb[i] != node.mem_total_mb)) {
    return false;
  }
  return true;
}

const std::vector<uint8_t>& Placer::UsableMask(const PendingJob& job,
                                               uint32_t partition) {
  const std::size_t slot = std::size_t{partition} * 2 + job.is_restart;
  if (usable_masks_.size() <= slot) {
    usable_masks_.resize(slot + 1);
    usable_mask_built_.resize(slot + 1, 0);
  }
  if (!usable_mask_built_[slot]) {
    usable_mask_built_[slot] = 1;
    const std::vector<uint8_t>& usable = UsableByMask(job, partition);
    std::vector<uint8_t>& mask = usable_masks_[slot];
    mask.reserve(nodes_.size());
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      mask.push_back(nodes_[i].schedulable && usable[i]);
    }
  }
  return usable_masks_[slot];
}

uint32_t Placer::CountLeaves(const std::vector<std::size_t>& chosen) const {
  std::vector<uint32_t> leaves;
  leaves.reserve(chosen.size());
  for (std::size_t i : chosen) leaves.push_back(fabric_.leaf_of_node[i]);
  std::sort(leaves.begin(), leaves.end());
  return static_cast<uint32_t>(std::unique(leaves.begin(), leaves.end()) -
                               leaves.begin());
}

Placement Placer::Place(const PlacementRequest& request,
                        const FreeResources& free) {
  if (!free.MayHold(request.job->nodes, request.job->gpus_per_node)) return {};
  if (request.job->HasNodeRestrictions()) return PlaceRestricted(request, free);
  usable_ = &UsableMask(*request.job, request.partition);
  Placement anywhere = PlaceOnFabric(request, free, false);
  // A restart takes hot spares first, so a failed gang comes back fast and
  // the other free nodes stay for the queue; but never at a wider switch
  // span than the job would get on every free node (spares scattered over
  // the fabric must not spread a gang that fits under one switch).
  if (request.job->is_restart) {
    Placement on_spares = PlaceOnFabric(request, free, true);
    if (on_spares.outcome == PlacementOutcome::kPlaced &&
        (anywhere.outcome != PlacementOutcome::kPlaced ||
         !request.topology_aware ||
         SpanOf(on_spares.nodes) <= SpanOf(anywhere.nodes))) {
      return on_spares;
    }
  }
  return anywhere;
}

Placer::Span Placer::SpanOf(const std::vector<std::size_t>& chosen) const {
  Span span;
  span.unlisted =
      std::any_of(chosen.begin(), chosen.end(), [&](std::size_t node) {
        return fabric_.IsUnlisted(fabric_.leaf_of_node[node]);
      });
  span.leaves = CountLeaves(chosen);
  if (span.leaves <= 1) return span;
  span.level = static_cast<uint32_t>(fabric_.group_of_leaf.size()) + 1;
  const uint32_t first_leaf = fabric_.leaf_of_node[chosen.front()];
  for (std::size_t level = 0; level < fabric_.group_of_leaf.size(); ++level) {
    const std::vector<uint32_t>& group_of = fabric_.group_of_leaf[level];
    const bool one_group =
        std::all_of(chosen.begin(), chosen.end(), [&](std::size_t node) {
          return group_of[fabric_.leaf_of_node[node]] == group_of[first_leaf];
        });
    if (one_group) {
      span.level = static_cast<uint32_t>(level) + 1;
      break;
    }
  }
  return span;
}

Placement Placer::PlaceRestricted(const PlacementRequest& request,
                                  const FreeResources& free) {
  const PendingJob& job = *request.job;
  std::vector<std::size_t> required;
  if (!FindRequiredNodes(job, required)) return {};
  // The rest of the job beyond its listed nodes, placed like any job (on
  // the mask, never live: the fitting sets are for unrestricted jobs).
  PendingJob rest = job;
  rest.required_nodes.clear();
  rest.excluded_nodes.clear();
  rest.constraint = nullptr;
  rest.nodes = job.nodes > required.size()
                   ? job.nodes - static_cast<uint32_t>(required.size())
                   : 0;
  PlacementRequest rest_request = request;
  rest_request.job = &rest;
  rest_request.live = false;
  rest_request.enforce_switch_limit = false;
  Placement best;
  const std::size_t choices =
      job.constraint ? job.constraint->ChoiceCount() : 1;
  for (std::size_t choice = 0; choice < choices; ++choice) {
    BuildRestrictedMask(job, choice, true, restricted_mask_);
    // The rest of the job comes from the listed nodes' part.
    if (!required.empty()) {
      const uint32_t part = PartOfNode(required.front());
      for (std::size_t i = 0; i < nodes_.size(); ++i) {
        if (PartOfNode(i) != part) restricted_mask_[i] = 0;
      }
      if ((part == fabric_.unlisted_part &&
           !UnlistedNodesServe(fabric_.unlisted, job.nodes)) ||
          !std::all_of(required.begin(), required.end(),
                       [&](std::size_t i) { return restricted_mask_[i]; })) {
        continue;
      }
    }
    usable_ = &restricted_mask_;
    const bool listed_fit =
        std::all_of(required.begin(), required.end(), [&](std::size_t i) {
          return request.filter.Allows(i) && Fits(i, job, free);
        });
    if (!listed_fit) continue;
    Placement placement;
    placement.nodes = required;
    if (rest.nodes > 0) {
      for (std::size_t i : required) restricted_mask_[i] = 0;
      Placement others = PlaceOnFabric(rest_request, free, false);
      if (others.outcome != PlacementOutcome::kPlaced) continue;
      placement.nodes.insert(placement.nodes.end(), others.nodes.begin(),
                             others.nodes.end());
    }
    placement.leaf_switches = CountLeaves(placement.nodes);
    if (request.enforce_switch_limit &&
        placement.leaf_switches > job.max_switches) {
      best.outcome = PlacementOutcome::kSwitchLimit;
      continue;
    }
    placement.outcome = PlacementOutcome::kPlaced;
    return placement;
  }
  return best;
}

Placement Placer::PlaceFirstFit(const PlacementRequest& request,
                                const FreeResources& free, bool spares_only,
                                LeafScope scope) {
  const PendingJob& job = *request.job;
  // Fitting nodes by part of the fabric, in node order; the first part
  // to hold the job takes it.
  fit_by_part_.resize(fabric_.part_names.size());
  for (std::vector<std::size_t>& list : fit_by_part_) list.clear();
  const std::vector<std::size_t>* chosen = nullptr;
  // A restart looks at spares first (pass 0), then at the rest.
  for (int pass = job.is_restart ? 0 : 1;
       pass < (spares_only ? 1 : 2) && chosen == nullptr; ++pass) {
    for (std::size_t i = 0; i < nodes_.size() && chosen == nullptr; ++i) {
      if (job.is_restart && nodes_[i].hot_spare != (pass == 0)) continue;
      if (!InScope(fabric_.leaf_of_node[i], scope)) continue;
      if (request.filter.Allows(i) && Fits(i, job, free)) {
        std::vector<std::size_t>& list = fit_by_part_[PartOfNode(i)];
        list.push_back(i);
        if (list.size() >= job.nodes) chosen = &list;
      }
    }
  }
  if (chosen == nullptr) return {};
  Placement placement;
  placement.nodes = *chosen;
  placement.leaf_switches = CountLeaves(placement.nodes);
  placement.outcome =
      request.enforce_switch_limit && placement.leaf_switches > job.max_switches
          ? PlacementOutcome::kSwitchLimit
          : PlacementOutcome::kPlaced;
  return placement;
}

Placement Placer::PlaceByTopology(const PlacementRequest& request,
                                  const FreeResources& free, bool spares_only,
                                  LeafScope scope) {
  const PendingJob& job = *request.job;
  const std::size_t need = job.nodes;
  // Fitting nodes grouped by leaf, touching only leaves that have one.
  if (fitting_by_leaf_.size() != fabric_.leaf_count) {
    fitting_by_leaf_.assign(fabric_.leaf_count, {});
    leaf_stamp_.assign(fabric_.leaf_count, 0);
  }
  touched_leaves_.clear();
  std::size_t total = 0;
  const std::vector<std::vector<std::size_t>>* by_leaf = &fitting_by_leaf_;
  if (request.live) {
    const FittingSet& set = LiveFittingSet(request, free, spares_only);
    by_leaf = &set.by_leaf;
    total = set.total;
    for (uint32_t leaf = 0; leaf < fabric_.leaf_count; ++leaf) {
      if (!set.by_leaf[leaf].empty() && InScope(leaf, scope)) {
        touched_leaves_.push_back(leaf);
      }
    }
  } else {
    ++stamp_;
    for (uint32_t leaf = 0; leaf < fabric_.leaf_count; ++leaf) {
      if (!InScope(leaf, scope) || !free.LeafMayHold(leaf, job.gpus_per_node)) {
        continue;
      }
      for (std::size_t i : fabric_.nodes_of_leaf[leaf]) {
        if (!FitsRequest(i, request, free, spares_only)) continue;
        if (leaf_stamp_[leaf] != stamp_) {
          leaf_stamp_[leaf] = stamp_;
          fitting_by_leaf_[leaf].clear();
          touched_leaves_.push_back(leaf);
        }
        fitting_by_leaf_[leaf].push_back(i);
        ++total;
      }
    }
  }
  if (total < need) return {};
  const std::vector<std::vector<std::size_t>>& fitting = *by_leaf;
  if (need == 1) {  // no switch to share: see single_node_fit.h
    // `total` of a live set counts fitting nodes outside `scope` too.
    if (touched_leaves_.empty()) return {};
    Placement placement;
    placement.outcome = PlacementOutcome::kPlaced;
    placement.leaf_switches = 1;
    placement.nodes.push_back(ChooseSingleNode(fitting, touched_leaves_, free,
                                               nodes_, job.is_restart));
    return PreferCached(job, free, fitting, touched_leaves_,
                        request.enforce_switch_limit ? job.max_switches : 0,
                        std::move(placement));
  }

  std::vector<uint32_t>& leaves = touched_leaves_;
  const uint32_t limit = request.enforce_switch_limit ? job.max_switches : 0;
  bool blocked_by_limit = false;
  std::vector<uint32_t> chosen_leaves;

  // Level 0: the single fullest-fitting leaf that still holds the job (the
  // least room, then the lowest id).
  int64_t single = -1;
  for (uint32_t leaf : leaves) {
    const std::size_t count = fitting[leaf].size();
    if (count < need) continue;
    if (single < 0 || count < fitting[single].size() ||
        (count == fitting[single].size() && leaf < single)) {
      single = leaf;
    }
  }
  if (single >= 0) {
    chosen_leaves.push_back(static_cast<uint32_t>(single));
  } else {
    // Leaves by room, most first: the fewest leaves that hold the job in a
    // group are its first leaves in this order.
    std::sort(leaves.begin(), leaves.end(), [&](uint32_t a, uint32_t b) {
      const std::size_t ca = fitting[a].size();
      const std::size_t cb = fitting[b].size();
      return ca != cb ? ca > cb : a < b;
    });
  }
  for (std::size_t level = 0;
       chosen_leaves.empty() && level < fabric_.group_of_leaf.size(); ++level) {
    const std::vector<uint32_t>& group_of = fabric_.group_of_leaf[level];
    const uint32_t groups = fabric_.groups_at_level[level];
    std::vector<std::size_t> gathered(groups, 0), room(groups, 0);
    std::vector<uint32_t> leaves_needed(groups, 0);
    for (uint32_t leaf : leaves) {
      const uint32_t g = group_of[leaf];
      const std::size_t count = fitting[leaf].size();
      room[g] += count;
      if (gathered[g] < need) {
        gathered[g] += count;
        ++leaves_needed[g];
      }
    }
    // Fewest leaves, then least room (tightest), then lowest id.
    int64_t best = -1;
    for (uint32_t g = 0; g < groups; ++g) {
      if (gathered[g] < need) continue;
      if (limit != 0 && leaves_needed[g] > limit) {
        blocked_by_limit = true;
        continue;
      }
      if (best < 0 || leaves_needed[g] < leaves_needed[best] ||
          (leaves_needed[g] == leaves_needed[best] && room[g] < room[best])) {
        best = g;
      }
    }
    if (best < 0) continue;
    // The fullest leaves of the group but the last, then the tightest leaf
    // that holds the rest, so a bigger leaf stays whole.
    std::size_t taken = 0;
    const uint32_t count = leaves_needed[best];
    for (uint32_t leaf : leaves) {
      if (group_of[leaf] != static_cast<uint32_t>(best)) continue;
      if (chosen_leaves.size() + 1 == count) break;
      chosen_leaves.push_back(leaf);
      taken += fitting[leaf].size();
    }
    uint32_t last = 0;
    std::size_t last_room = 0;
    for (uint32_t leaf : leaves) {
      if (group_of[leaf] != static_cast<uint32_t>(best) ||
          std::find(chosen_leaves.begin(), chosen_leaves.end(), leaf) !=
              chosen_leaves.end()) {
        continue;
      }
      const std::size_t count = fitting[leaf].size();
      if (taken + count >= need && (last_room == 0 || count < last_room)) {
        last = leaf;
        last_room = count;
      }
    }
    chosen_leaves.push_back(last);
  }
  if (chosen_leaves.empty()) {
    Placement none;
    none.outcome = blocked_by_limit ? PlacementOutcome::kSwitchLimit
                                    : PlacementOutcome::kNoRoom;
    return none;
  }

  Placement placement;
  placement.outcome = PlacementOutcome::kPlaced;
  placement.leaf_switches = static_cast<uint32_t>(chosen_leaves.size());
  for (uint32_t leaf : chosen_leaves) {
    std::vector<std::size_t>& candidates = candidates_;
    candidates.assign(fitting[leaf].begin(), fitting[leaf].end());
    const std::size_t want =
        std::min(need - placement.nodes.size(), candidates.size());
    // A restart's spares come first (and hold the first ranks).
    auto spare_first = [&](std::size_t a, std::size_t b) {
      return job.is_restart && nodes_[a].hot_spare && !nodes_[b].hot_spare;
    };
    if (want < candidates.size()) {
      // Tightest nodes first: the ones with the fewest free GPUs, then CPUs,
      // keep emptier nodes whole for jobs that need them.
      std::partial_sort(candidates.begin(), candidates.begin() + want,
                        candidates.end(), [&](std::size_t a, std::size_t b) {
                          if (spare_first(a, b)) return true;
                          if (spare_first(b, a)) return false;
                          if (free.gpus[a].size() != free.gpus[b].size())
                            return free.gpus[a].size() < free.gpus[b].size();
                          if (free.cpus[a] != free.cpus[b])
                            return free.cpus[a] < free.cpus[b];
                          return a < b;
                        });
    }
    std::sort(candidates.begin(), candidates.begin() + want,
              [&](std::size_t a, std::size_t b) {
                if (spare_first(a, b)) return true;
                if (spare_first(b, a)) return false;
                return a < b;
              });
    placement.nodes.insert(placement.nodes.end(), candidates.begin(),
                           candidates.begin() + want);
  }
  return PreferCached(job, free, fitting, leaves, limit, std::move(placement));
}

Placement Placer::PreferCached(
    const PendingJob& job, const FreeResources& free,
    const std::vector<std::vector<std::size_t>>& fitting,
    const std::vector<uint32_t>& leaves, uint32_t max_leaves,
    Placement placement) {
  if (job.datasets.empty()) return placement;
  CacheChoiceInput cache{&nodes_,
                         &fabric_,
                         &free,
                         &job,
                         &fitting,
                         &leaves,
                         max_leaves,
                         [this](const std::vector<std::size_t>& chosen) {
                           const Span span = SpanOf(chosen);
                           return std::make_pair(span.level, span.leaves);
                         }};
  return PreferCachedNodes(cache, std::move(placement));
}

bool Placer::FitsRequest(std::size_t node, const PlacementRequest& request,
                         const FreeResources& free, bool spares_only) const {
  return (!spares_only || nodes_[node].hot_spare) &&
         request.filter.Allows(node) && Fits(node, *request.job, free);
}

const Placer::FittingSet& Placer::LiveFittingSet(
    const PlacementRequest& request, const FreeResources& free,
    bool spares_only) {
  const PendingJob& job = *request.job;
  const bool filtered = request.filter.reserved_from != nullptr;
  const FittingKey key{job.gpus_per_node,
                       CpusNeeded(job),
                       job.mem_per_node_mb,
                       job.exclusive,
                       job.is_restart,
                       spares_only,
                       filtered,
                       filtered ? request.filter.job_end_ms : 0,
                       request.partition};
  auto [it, inserted] = fitting_sets_.try_emplace(key);
  FittingSet& set = it->second;
  if (inserted) {
    set.by_leaf.resize(fabric_.leaf_count);
    for (uint32_t leaf = 0; leaf < fabric_.leaf_count; ++leaf) {
      if (!free.LeafMayHold(leaf, job.gpus_per_node)) continue;
      for (std::size_t i : fabric_.nodes_of_leaf[leaf]) {
        if (FitsRequest(i, request, free, spares_only)) {
          set.by_leaf[leaf].push_back(i);
          ++set.total;
        }
      }
    }
  } else {
    for (std::size_t k = set.changes_seen; k < free.changed_nodes.size(); ++k) {
      const std::size_t i = free.changed_nodes[k];
      std::vector<std::size_t>& list = set.by_leaf[fabric_.leaf_of_node[i]];
      auto at = std::lower_bound(list.begin(), list.end(), i);
      const bool listed = at != list.end() && *at == i;
      const bool fits = FitsRequest(i, request, free, spares_only);
      if (fits && !listed) {
        list.insert(at, i);
        ++set.total;
      } else if (!fits && listed) {
        list.erase(at);
        --set.total;
      }
    }
  }
  set.changes_seen = free.changed_nodes.size();
  return set;
}

namespace {

// ChooseGpus when every free GPU has a named HCA and there are at most 64:
// the same choice without building groups. Round r of the round-robin takes
// the r-th GPU of each HCA in HCA order, so the GPUs taken are the first
// `count` by (rank within the HCA, HCA order).
std::vector<uint32_t> ChooseGpusOfNamedHcas(
    const std::vector<uint32_t>& free_gpus,
    const std::vector<std::string>& gpu_hca, uint32_t count) {
  const std::size_t n = free_gpus.size();
  std::array<uint32_t, 64> first_of_group;  // a GPU index per HCA, in order
  std::array<uint32_t, 64> group_size;
  std::array<uint32_t, 64> keys;
  uint32_t groups = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::string& hca = gpu_hca[free_gpus[i]];
    uint32_t g = 0;
    while (g < groups && gpu_hca[free_gpus[first_of_group[g]]] != hca) ++g;
    if (g == groups) {
      first_of_group[groups] = static_cast<uint32_t>(i);
      group_size[groups] = 0;
      ++groups;
    }
    keys[i] = (group_size[g]++ << 12) | (g << 6) | static_cast<uint32_t>(i);
  }
  std::sort(keys.begin(), keys.begin() + n);
  std::vector<uint32_t> chosen;
  chosen.reserve(count);
  for (uint32_t k = 0; k < count; ++k) {
    chosen.push_back(free_gpus[keys[k] & 63]);
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

}  // namespace

std::vector<uint32_t> ChooseGpus(const std::vector<uint32_t>& free_gpus,
                                 const std::vector<std::string>& gpu_hca,
                                 uint32_t count) {
  if (count >= free_gpus.size()) return free_gpus;
  if (free_gpus.size() <= 64 &&
      std::all_of(free_gpus.begin(), free_gpus.end(), [&](uint32_t gpu) {
        return gpu < gpu_hca.size() && !gpu_hca[gpu].empty();
      })) {
    return ChooseGpusOfNamedHcas(free_gpus, gpu_hca, count);
  }
  // Round-robin over HCAs in order of their lowest free GPU: the first pick
  // of every HCA comes before any second pick, so ranks get distinct NICs.
  std::vector<std::string_view> hca_order;
  std::vector<std::vector<uint32_t>> by_hca;
  std::vector<std::string> unknown;   // names for GPUs without an HCA
  unknown.reserve(free_gpus.size());  // keeps the views into it valid
  for (uint32_t gpu : free_gpus) {
    std::string_view hca;
    if (gpu < gpu_hca.size()) hca = gpu_hca[gpu];
    // An unknown HCA pairs with nothing, so the GPU is its own group.
    if (hca.empty())
      hca = unknown.emplace_back("\x01gpu" + std::to_string(gpu));
    auto it = std::find(hca_order.begin(), hca_order.end(), hca);
    if (it == hca_order.end()) {
      hca_order.push_back(hca);
      by_hca.push_back({gpu});
    } else {
      by_hca[it - hca_order.begin()].push_back(gpu);
    }
  }
  std::vector<uint32_t> chosen;
  for (std::size_t round = 0; chosen.size() < count; ++round) {
    for (const std::vector<uint32_t>& group : by_hca) {
      if (round < group.size() && chosen.size() < count) {
        chosen.push_back(group[round]);
      }
    }
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

NodeShare ShareOn(std::size_t node_index, const NodeSnapshot& node,
                  const PendingJob& job, const FreeResources& free) {
  NodeShare share;
  share.node = NodeId(node_index);
  share.cpus = job.exclusive ? free.cpus[node_index] : CpusNeeded(job);
  share.mem_mb = job.exclusive ? free.mem_mb[node_index] : job.mem_per_node_mb;
  share.gpus = ChooseGpusFor(job, node, free.gpus[node_index]);
  return share;
}

}  // namespace gantry::scheduler_internal
