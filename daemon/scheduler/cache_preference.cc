#include "daemon/scheduler/cache_preference.h"

#include <algorithm>
#include <map>
#include <optional>

namespace gantry::scheduler_internal {

uint64_t CachedBytes(const NodeSnapshot& node, const PendingJob& job) {
  uint64_t bytes = 0;
  for (const DatasetNeed& need : job.datasets) {
    if (std::binary_search(node.cached_datasets.begin(),
                           node.cached_datasets.end(), need.key)) {
      bytes += std::max<uint64_t>(need.bytes, 1);
    }
  }
  return bytes;
}

namespace {

struct Candidate {
  std::vector<std::size_t> nodes;  // rank order
  uint64_t score = 0;
};

class CacheChooser {
 public:
  explicit CacheChooser(const CacheChoiceInput& input)
      : in_(input),
        job_(*input.job),
        nodes_(*input.nodes),
        fabric_(*input.fabric),
        free_(*input.free),
        fitting_(*input.fitting),
        score_(nodes_.size(), 0) {
    for (uint32_t leaf : *in_.leaves) {
      for (std::size_t i : fitting_[leaf]) {
        score_[i] = CachedBytes(nodes_[i], job_);
        any_cached_ = any_cached_ || score_[i] > 0;
      }
    }
  }

  Placement Choose(Placement chosen) {
    const uint64_t chosen_score = ScoreOf(chosen.nodes);
    const std::size_t chosen_held = HeldOf(chosen.nodes);
    std::optional<Candidate> best;
    if (job_.nodes == 1) {
      best = SingleNode(chosen.nodes.front());
    } else if (any_cached_) {
      // (Without a cached byte anywhere there is nothing to move for, and
      // the searches over groups of leaves are skipped.)
      best = job_.dataset_locality == DatasetLocality::kCache
                 ? WidestUseful()
                 : WithinSpan(in_.span_of(chosen.nodes), FitOf(chosen.nodes));
    }
    // Not more bytes elsewhere: keep the placer's leaves (its packing),
    // and choose the nodes within them.
    if (job_.nodes > 1 && (!best.has_value() || best->score <= chosen_score)) {
      best = SameLeaves(chosen.nodes);
    }
    if (!best.has_value() || best->score < chosen_score ||
        (best->score == chosen_score && HeldOf(best->nodes) >= chosen_held)) {
      return chosen;
    }
    Placement placement;
    placement.outcome = PlacementOutcome::kPlaced;
    placement.nodes = std::move(best->nodes);
    placement.leaf_switches = LeavesOf(placement.nodes);
    return placement;
  }

 private:
  // Better first: a restart's spares, the most bytes cached, then the
  // tightest fit (as the placer's own choice within a leaf), then the index.
  bool Better(std::size_t a, std::size_t b) const {
    if (job_.is_restart && nodes_[a].hot_spare != nodes_[b].hot_spare) {
      return nodes_[a].hot_spare;
    }
    if (score_[a] != score_[b]) return score_[a] > score_[b];
    if (Held(a) != Held(b)) return Held(a) < Held(b);
    if (free_.gpus[a].size() != free_.gpus[b].size()) {
      return free_.gpus[a].size() < free_.gpus[b].size();
    }
    if (free_.cpus[a] != free_.cpus[b]) return free_.cpus[a] < free_.cpus[b];
    return a < b;
  }

  uint64_t ScoreOf(const std::vector<std::size_t>& chosen) const {
    uint64_t score = 0;
    for (std::size_t i : chosen) score += score_[i];
    return score;
  }

  // Datasets of others the job's copy may evict on the node.
  std::size_t Held(std::size_t i) const {
    return score_[i] > 0 ? 0 : nodes_[i].cached_datasets.size();
  }
  std::size_t HeldOf(const std::vector<std::size_t>& chosen) const {
    std::size_t held = 0;
    for (std::size_t i : chosen) held += Held(i);
    return held;
  }

  uint32_t LeavesOf(const std::vector<std::size_t>& chosen) const {
    std::vector<uint32_t> leaves;
    for (std::size_t i : chosen) leaves.push_back(fabric_.leaf_of_node[i]);
    std::sort(leaves.begin(), leaves.end());
    return static_cast<uint32_t>(std::unique(leaves.begin(), leaves.end()) -
                                 leaves.begin());
  }

  bool Idle(std::size_t i) const {
    return free_.gpus[i].size() == nodes_[i].gpus_total &&
           free_.cpus[i] == nodes_[i].cpus_total;
  }

  // A one-node job: by default only among nodes of the leaf the placer
  // chose that are as tight a fit (packing comes first: moving to another
  // leaf would break the placer's choice of leaf, which keeps whole leaves
  // free for gangs), with DatasetLocality::kCache among all fitting nodes.
  std::optional<Candidate> SingleNode(std::size_t chosen) const {
    const bool any = job_.dataset_locality == DatasetLocality::kCache;
    std::optional<std::size_t> best;
    for (uint32_t leaf : *in_.leaves) {
      for (std::size_t i : fitting_[leaf]) {
        const bool as_tight =
            fabric_.leaf_of_node[i] == fabric_.leaf_of_node[chosen] &&
            free_.gpus[i].size() == free_.gpus[chosen].size() &&
            free_.cpus[i] == free_.cpus[chosen] && Idle(i) == Idle(chosen) &&
            nodes_[i].hot_spare == nodes_[chosen].hot_spare;
        if ((any || as_tight) && (!best || Better(i, *best))) best = i;
      }
    }
    if (!best) return std::nullopt;
    return Candidate{{*best}, score_[*best]};
  }

  // The fitting leaves grouped by the switch at `level` (an index into
  // group_of_leaf; -1: every leaf its own group).
  std::vector<std::vector<uint32_t>> GroupsAt(int level) const {
    std::map<uint32_t, std::vector<uint32_t>> groups;
    for (uint32_t leaf : *in_.leaves) {
      const uint32_t group =
          level < 0 ? leaf : fabric_.group_of_leaf[level][leaf];
      groups[group].push_back(leaf);
    }
    std::vector<std::vector<uint32_t>> out;
    for (auto& [group, leaves] : groups) out.push_back(std::move(leaves));
    return out;
  }

  // How a placement packs its leaves: for each leaf it uses, the leaf's
  // fitting nodes and how many of them it takes, in order. Two placements
  // of the same fit leave the same room behind, leaf for leaf.
  std::vector<std::pair<std::size_t, std::size_t>> FitOf(
      const std::vector<std::size_t>& chosen) const {
    std::map<uint32_t, std::size_t> taken;
    for (std::size_t i : chosen) ++taken[fabric_.leaf_of_node[i]];
    std::vector<std::pair<std::size_t, std::size_t>> fit;
    for (const auto& [leaf, count] : taken) {
      fit.emplace_back(fitting_[leaf].size(), count);
    }
    std::sort(fit.begin(), fit.end());
    return fit;
  }

  // Default: the placement with the most bytes cached among those as good
  // for the switch tree as the placer's: the same switch level, no more
  // leaves, and leaves packed as tightly (FitOf). A leaf of a different
  // fill would change which leaves stay whole for the gangs after it:
  // over a trace, that costs more locality than the cache gains
  // (gantry-sim cache on the Philly window of its largest gangs).
  std::optional<Candidate> WithinSpan(
      std::pair<uint32_t, uint32_t> span,
      const std::vector<std::pair<std::size_t, std::size_t>>& fit) {
    std::optional<Candidate> best;
    const int level = static_cast<int>(span.first) - 1;
    for (const std::vector<uint32_t>& group : GroupsAt(level)) {
      std::optional<Candidate> candidate = InGroup(group, span.second);
      if (candidate && (!best || candidate->score > best->score) &&
          in_.span_of(candidate->nodes) <= span &&
          FitOf(candidate->nodes) == fit) {
        best = std::move(candidate);
      }
    }
    return best;
  }

  // As many nodes from each of the chosen placement's leaves, the best of
  // each leaf: the most bytes cached, then the tightest (as the placer),
  // then the fewest other datasets.
  Candidate SameLeaves(const std::vector<std::size_t>& chosen) {
    Candidate candidate;
    std::size_t k = 0;
    while (k < chosen.size()) {
      const uint32_t leaf = fabric_.leaf_of_node[chosen[k]];
      std::size_t count = 0;
      while (k < chosen.size() && fabric_.leaf_of_node[chosen[k]] == leaf) {
        ++count;
        ++k;
      }
      scratch_.assign(fitting_[leaf].begin(), fitting_[leaf].end());
      std::partial_sort(
          scratch_.begin(), scratch_.begin() + count, scratch_.end(),
          [&](std::size_t a, std::size_t b) {
            if (job_.is_restart && nodes_[a].hot_spare != nodes_[b].hot_spare) {
              return nodes_[a].hot_spare;
            }
            if (score_[a] != score_[b]) {
              return score_[a] > score_[b];
            }
            if (free_.gpus[a].size() != free_.gpus[b].size()) {
              return free_.gpus[a].size() < free_.gpus[b].size();
            }
            if (free_.cpus[a] != free_.cpus[b]) {
              return free_.cpus[a] < free_.cpus[b];
            }
            if (Held(a) != Held(b)) return Held(a) < Held(b);
            return a < b;
          });
      std::sort(scratch_.begin(), scratch_.begin() + count);
      candidate.nodes.insert(candidate.nodes.end(), scratch_.begin(),
                             scratch_.begin() + count);
    }
    candidate.score = ScoreOf(candidate.nodes);
    return candidate;
  }

  // DatasetLocality::kCache: the most bytes cached, then the narrowest span
  // (levels are tried from the lowest, so a tie keeps the lower one).
  std::optional<Candidate> WidestUseful() {
    std::optional<Candidate> best;
    std::pair<uint32_t, uint32_t> best_span;
    const int top = static_cast<int>(fabric_.group_of_leaf.size());
    for (int level = -1; level < top; ++level) {
      for (const std::vector<uint32_t>& group : GroupsAt(level)) {
        const std::size_t limit =
            level < 0 ? 1
                      : (in_.max_leaves != 0 ? in_.max_leaves : group.size());
        std::optional<Candidate> candidate = InGroup(group, limit);
        if (!candidate) continue;
        const std::pair<uint32_t, uint32_t> span =
            in_.span_of(candidate->nodes);
        if (!best || candidate->score > best->score ||
            (candidate->score == best->score && span < best_span)) {
          best = std::move(candidate);
          best_span = span;
        }
      }
    }
    return best;
  }

  // Between two leaves of `a` and `b` fitting nodes, for `rest` more nodes:
  // as the placer, one that holds the rest, the tightest such; else the
  // one with the most room.
  static bool TighterFor(std::size_t rest, std::size_t a, std::size_t b) {
    const bool a_holds = a >= rest, b_holds = b >= rest;
    if (a_holds != b_holds) return a_holds;
    return a_holds ? a < b : a > b;
  }

  // The job's nodes from at most `max_leaves` leaves of one group: leaves
  // taken greedily by the bytes they hold (then as the placer packs: the
  // tightest that holds the rest, else the most room), each only if the
  // largest of the remaining slots can still hold the rest of the job; then
  // the best nodes of those leaves. None when the group cannot hold it.
  std::optional<Candidate> InGroup(const std::vector<uint32_t>& group,
                                   std::size_t max_leaves) {
    const std::size_t need = job_.nodes;
    const std::size_t n = group.size();
    std::vector<uint64_t> value(n, 0);
    std::vector<std::size_t> room(n, 0);
    std::size_t total_room = 0;
    for (std::size_t k = 0; k < n; ++k) {
      scratch_.assign(fitting_[group[k]].begin(), fitting_[group[k]].end());
      room[k] = scratch_.size();
      total_room += room[k];
      std::sort(
          scratch_.begin(), scratch_.end(),
          [&](std::size_t a, std::size_t b) { return score_[a] > score_[b]; });
      for (std::size_t j = 0; j < std::min(need, scratch_.size()); ++j) {
        value[k] += score_[scratch_[j]];
      }
    }
    if (total_room < need) return std::nullopt;
    std::vector<std::size_t> by_room(n);
    for (std::size_t k = 0; k < n; ++k) by_room[k] = k;
    std::sort(by_room.begin(), by_room.end(),
              [&](std::size_t a, std::size_t b) { return room[a] > room[b]; });
    const std::size_t limit = std::min(max_leaves, n);
    std::vector<bool> taken(n, false);
    std::vector<std::size_t> chosen;
    std::size_t gathered = 0;
    for (std::size_t step = 0; step < limit; ++step) {
      const std::size_t slots_after = limit - step - 1;
      std::optional<std::size_t> pick;
      for (std::size_t k = 0; k < n; ++k) {
        if (taken[k]) continue;
        if (gathered + room[k] < need) {
          std::size_t more = 0, slots = slots_after;
          for (std::size_t j = 0; j < n && slots > 0; ++j) {
            if (taken[by_room[j]] || by_room[j] == k) continue;
            more += room[by_room[j]];
            --slots;
          }
          if (gathered + room[k] + more < need) continue;
        }
        if (!pick || value[k] > value[*pick] ||
            (value[k] == value[*pick] &&
             TighterFor(need - std::min(need, gathered), room[k],
                        room[*pick]))) {
          pick = k;
        }
      }
      if (!pick || (gathered >= need && value[*pick] == 0)) break;
      taken[*pick] = true;
      chosen.push_back(*pick);
      gathered += room[*pick];
    }
    if (gathered < need) return std::nullopt;
    scratch_.clear();
    for (std::size_t k : chosen) {
      scratch_.insert(scratch_.end(), fitting_[group[k]].begin(),
                      fitting_[group[k]].end());
    }
    std::partial_sort(
        scratch_.begin(), scratch_.begin() + need, scratch_.end(),
        [&](std::size_t a, std::size_t b) { return Better(a, b); });
    scratch_.resize(need);
    // Rank order as the placer's: by leaf in the order taken, a restart's
    // spares first within a leaf, then ascending.
    Candidate candidate;
    for (std::size_t k : chosen) {
      const std::size_t start = candidate.nodes.size();
      for (std::size_t i : scratch_) {
        if (fabric_.leaf_of_node[i] == group[k]) candidate.nodes.push_back(i);
      }
      std::sort(
          candidate.nodes.begin() + start, candidate.nodes.end(),
          [&](std::size_t a, std::size_t b) {
            if (job_.is_restart && nodes_[a].hot_spare != nodes_[b].hot_spare) {
              return nodes_[a].hot_spare;
            }
            return a < b;
          });
    }
    candidate.score = ScoreOf(candidate.nodes);
    return candidate;
  }

  const CacheChoiceInput& in_;
  const PendingJob& job_;
  const std::vector<NodeSnapshot>& nodes_;
  const FabricIndex& fabric_;
  const FreeResources& free_;
  const std::vector<std::vector<std::size_t>>& fitting_;
  std::vector<uint64_t> score_;  // per node; set for fitting nodes only
  bool any_cached_ = false;      // some fitting node holds some of the data
  std::vector<std::size_t> scratch_;
};

}  // namespace

Placement PreferCachedNodes(const CacheChoiceInput& input, Placement chosen) {
  if (input.job->datasets.empty() ||
      chosen.outcome != PlacementOutcome::kPlaced || chosen.nodes.empty()) {
    return chosen;
  }
  return CacheChooser(input).Choose(std::move(chosen));
}

}  // namespace gantry::scheduler_internal
