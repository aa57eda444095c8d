// Connected parts of the fabric and unlisted nodes (see fabric_parts.h),
// and the placer's steps that keep to them.

#include "daemon/scheduler/fabric_parts.h"

#include <algorithm>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/scheduler/scheduler_placement.h"

namespace gantry {

absl::StatusOr<UnlistedNodes> ParseUnlistedNodes(std::string_view text) {
  if (text == "last") return UnlistedNodes::kLast;
  if (text == "single") return UnlistedNodes::kSingleNode;
  if (text == "never") return UnlistedNodes::kNever;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown --unlisted-nodes \"", std::string(text),
                   "\" (expected last, single or never)"));
}

const char* UnlistedNodesName(UnlistedNodes policy) {
  switch (policy) {
    case UnlistedNodes::kLast:
      return "last";
    case UnlistedNodes::kSingleNode:
      return "single";
    case UnlistedNodes::kNever:
      return "never";
  }
  return "last";
}

bool UnlistedNodesServe(UnlistedNodes policy, uint32_t job_nodes) {
  switch (policy) {
    case UnlistedNodes::kLast:
      return true;
    case UnlistedNodes::kSingleNode:
      return job_nodes <= 1;
    case UnlistedNodes::kNever:
      return false;
  }
  return false;
}

void SetFabricPlace(const Topology& tree, NodeSnapshot& node) {
  node.switch_path.clear();
  node.fabric_part.clear();
  std::optional<std::string> name = tree.LeafSwitchOf(node.name);
  // The scheduler sees a tree: the first parent where a switch has several
  // (the part, from every link, still joins what the other parents join).
  while (name.has_value() && node.switch_path.size() < 64) {
    node.switch_path.push_back(*name);
    const Topology::Switch* sw = tree.FindSwitch(*name);
    if (sw == nullptr || sw->parents.empty()) break;
    name = sw->parents.front().name;
  }
  node.fabric_part = FabricPartName(tree, node.name);
}

std::string FabricPartName(const Topology& tree, std::string_view node) {
  const int part = tree.PartOf(node);
  return part < 0 ? std::string() : tree.parts()[part].name();
}

std::string_view FabricPartOf(const NodeSnapshot& node) {
  if (!node.fabric_part.empty()) return node.fabric_part;
  if (!node.switch_path.empty()) return node.switch_path.back();
  return {};
}

void PartTally::Add(std::string_view part) {
  auto it = by_part_.find(part);
  if (it == by_part_.end()) it = by_part_.emplace(std::string(part), 0).first;
  ++it->second;
  ++total_;
}

bool PartTally::HasTree() const {
  return by_part_.size() > 1 ||
         (by_part_.size() == 1 && !by_part_.begin()->first.empty());
}

std::size_t PartTally::Largest(UnlistedNodes policy, uint32_t job_nodes) const {
  const bool tree = HasTree();
  std::size_t largest = 0;
  for (const auto& [part, count] : by_part_) {
    if (tree && part.empty() && !UnlistedNodesServe(policy, job_nodes)) {
      continue;
    }
    largest = std::max(largest, count);
  }
  return largest;
}

std::string PartTally::LimitNote(UnlistedNodes policy,
                                 uint32_t job_nodes) const {
  if (!HasTree()) return "";
  std::string note;
  std::vector<std::string> parts;
  std::size_t unlisted = 0;
  for (const auto& [part, count] : by_part_) {
    if (part.empty()) {
      unlisted = count;
    } else {
      parts.push_back(part);
    }
  }
  const bool unlisted_serve = UnlistedNodesServe(policy, job_nodes);
  if (parts.size() + (unlisted > 0 && unlisted_serve ? 1 : 0) > 1) {
    absl::StrAppend(&note, "; at most ", Largest(policy, job_nodes),
                    " of them in one connected part of the fabric (no switch "
                    "joins ",
                    absl::StrJoin(parts, ", "),
                    unlisted > 0 && unlisted_serve
                        ? " and the nodes outside the topology"
                        : "",
                    ")");
  }
  if (unlisted > 0 && !unlisted_serve) {
    absl::StrAppend(
        &note, "; ", unlisted,
        " of them are outside the imported topology and take ",
        policy == UnlistedNodes::kNever ? "no jobs" : "single-node jobs only",
        " (gantryd --unlisted-nodes=", UnlistedNodesName(policy), ")");
  }
  return note;
}

namespace scheduler_internal {

bool AnyInTree(const std::vector<NodeSnapshot>& nodes) {
  return std::any_of(nodes.begin(), nodes.end(), [](const NodeSnapshot& n) {
    return !n.switch_path.empty();
  });
}

std::string UnlistedKey(const NodeSnapshot& node, bool any_in_tree) {
  // Switch names never start with \x01: the key cannot meet a switch's.
  return any_in_tree ? absl::StrCat("\x01", node.name) : std::string();
}

void AddPartLevel(const std::vector<NodeSnapshot>& nodes,
                  const std::vector<std::size_t>& first_node_of_leaf,
                  bool any_in_tree, FabricIndex& index) {
  std::map<std::string_view, uint32_t> part_ids;
  index.part_of_leaf.assign(index.leaf_count, 0);
  index.part_names.clear();
  for (uint32_t leaf = 0; leaf < index.leaf_count; ++leaf) {
    const std::string_view part = FabricPartOf(nodes[first_node_of_leaf[leaf]]);
    auto [it, inserted] =
        part_ids.emplace(part, static_cast<uint32_t>(part_ids.size()));
    if (inserted) index.part_names.emplace_back(part);
    index.part_of_leaf[leaf] = it->second;
    if (any_in_tree && part.empty()) index.unlisted_part = it->second;
  }
  if (index.part_names.empty()) index.part_names.emplace_back();
  index.group_of_leaf.push_back(index.part_of_leaf);
  index.groups_at_level.push_back(
      static_cast<uint32_t>(index.part_names.size()));
}

Placement Placer::PlaceOnFabric(const PlacementRequest& request,
                                const FreeResources& free, bool spares_only) {
  auto place = [&](LeafScope scope) {
    return request.topology_aware
               ? PlaceByTopology(request, free, spares_only, scope)
               : PlaceFirstFit(request, free, spares_only, scope);
  };
  Placement listed = place(LeafScope::kListed);
  if (listed.outcome == PlacementOutcome::kPlaced ||
      fabric_.unlisted_part == FabricIndex::kNoPart ||
      !UnlistedNodesServe(fabric_.unlisted, request.job->nodes)) {
    return listed;
  }
  Placement unlisted = place(LeafScope::kUnlisted);
  if (unlisted.outcome == PlacementOutcome::kPlaced) return unlisted;
  // Waiting for --switches on listed nodes says more than no room.
  return listed.outcome == PlacementOutcome::kSwitchLimit ? listed : unlisted;
}

std::size_t Placer::CountCapableInPart(
    const PendingJob& job, const std::vector<std::size_t>& required,
    absl::FunctionRef<bool(std::size_t)> capable) {
  capable_by_part_.assign(fabric_.part_names.size(), 0);
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (capable(i)) ++capable_by_part_[PartOfNode(i)];
  }
  const bool unlisted_serve = UnlistedNodesServe(fabric_.unlisted, job.nodes);
  if (!required.empty()) {
    const uint32_t part = PartOfNode(required.front());
    const bool one_part =
        std::all_of(required.begin(), required.end(),
                    [&](std::size_t i) { return PartOfNode(i) == part; });
    if (!one_part || (part == fabric_.unlisted_part && !unlisted_serve)) {
      return 0;
    }
    return capable_by_part_[part];
  }
  std::size_t largest = 0;
  for (uint32_t part = 0; part < capable_by_part_.size(); ++part) {
    if (part == fabric_.unlisted_part && !unlisted_serve) continue;
    largest = std::max(largest, capable_by_part_[part]);
  }
  return largest;
}

std::string Placer::CapableText(const PendingJob& job, uint32_t partition,
                                std::size_t capable) {
  const std::string plain = absl::StrCat("partition ", job.partition, " has ",
                                         capable, " such node(s)");
  std::vector<std::size_t> required;
  if (job.HasNodeRestrictions() && FindRequiredNodes(job, required) &&
      !required.empty()) {
    std::vector<std::string> parts;
    for (std::size_t i : required) {
      const std::string& name = fabric_.part_names[PartOfNode(i)];
      const std::string shown = name.empty() ? "outside the topology" : name;
      if (std::find(parts.begin(), parts.end(), shown) == parts.end()) {
        parts.push_back(shown);
      }
    }
    if (parts.size() > 1) {
      return absl::StrCat(plain,
                          "; its --nodelist nodes are in parts of the fabric "
                          "that no switch joins (",
                          absl::StrJoin(parts, ", "), ")");
    }
  }
  // What CapableNodes counted, by part, for the best choice of the job's
  // matching-OR group.
  std::optional<PartTally> best;
  const std::size_t choices =
      job.constraint ? job.constraint->ChoiceCount() : 1;
  for (std::size_t choice = 0; choice < choices; ++choice) {
    const std::vector<uint8_t>* mask = &UsableByMask(job, partition);
    if (job.HasNodeRestrictions()) {
      BuildRestrictedMask(job, choice, false, restricted_mask_);
      mask = &restricted_mask_;
    }
    PartTally tally;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      if ((*mask)[i] && CapableOf(nodes_[i], job)) {
        tally.Add(fabric_.part_names[PartOfNode(i)]);
      }
    }
    if (!best || tally.Largest(fabric_.unlisted, job.nodes) >
                     best->Largest(fabric_.unlisted, job.nodes)) {
      best = std::move(tally);
    }
  }
  const std::string note = best->LimitNote(fabric_.unlisted, job.nodes);
  if (note.empty()) return plain;
  return absl::StrCat("partition ", job.partition, " has ", best->Total(),
                      " such node(s)", note);
}

}  // namespace scheduler_internal
}  // namespace gantry
