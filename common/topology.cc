// The switch tree (see topology.h).

#include "common/topology.h"

#include <algorithm>
#include <deque>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/hostlist.h"

namespace gantry {
namespace {

// "file:12: " (or "file: ", "line 12: ", "") in front of a reason.
std::string Where(const std::string& source, int line) {
  if (source.empty()) {
    return line > 0 ? absl::StrCat("line ", line, ": ") : std::string();
  }
  return line > 0 ? absl::StrCat(source, ":", line, ": ")
                  : absl::StrCat(source, ": ");
}

std::string LineNote(int line) {
  return line > 0 ? absl::StrCat(" (line ", line, ")") : std::string();
}

absl::Status Refuse(const std::string& source, int line,
                    const std::string& reason) {
  return absl::InvalidArgumentError(Where(source, line) + reason);
}

// Kahn's algorithm over the child relation: leaves first, each parent one
// above its highest child. Switches left over sit on a cycle or above one.
absl::Status LevelsFromChildren(const TopologySpec& spec,
                                const std::vector<std::vector<int>>& children,
                                const std::vector<std::vector<int>>& parents,
                                const std::vector<int>& first_link_line,
                                std::vector<int>* level) {
  const size_t n = children.size();
  std::vector<size_t> pending(n);
  std::deque<int> ready;
  for (size_t i = 0; i < n; ++i) {
    pending[i] = children[i].size();
    if (pending[i] == 0) ready.push_back(static_cast<int>(i));
  }
  level->assign(n, 0);
  size_t done = 0;
  while (!ready.empty()) {
    const int s = ready.front();
    ready.pop_front();
    ++done;
    for (int p : parents[s]) {
      (*level)[p] = std::max((*level)[p], (*level)[s] + 1);
      if (--pending[p] == 0) ready.push_back(p);
    }
  }
  if (done == n) return absl::OkStatus();

  // Every switch left has a child that is left too: walking down such
  // children must come back to a switch already seen.
  int start = 0;
  while (pending[start] == 0) ++start;
  std::vector<int> path;
  std::vector<int> position(n, -1);
  int s = start;
  while (position[s] < 0) {
    position[s] = static_cast<int>(path.size());
    path.push_back(s);
    for (int c : children[s]) {
      if (pending[c] != 0) {
        s = c;
        break;
      }
    }
  }
  std::vector<std::string> names;
  for (size_t i = static_cast<size_t>(position[s]); i < path.size(); ++i) {
    names.push_back(spec.switches[path[i]].name);
  }
  names.push_back(spec.switches[s].name);
  return Refuse(spec.source, first_link_line[s],
                absl::StrCat("switch loop: ", absl::StrJoin(names, " -> ")));
}

}  // namespace

absl::StatusOr<Topology> Topology::Build(TopologySpec spec) {
  Topology t;
  t.source_ = spec.source;
  const std::string& src = spec.source;
  const bool directed = spec.link_kind == TopologySpec::LinkKind::kParentChild;

  // Switches.
  const size_t n = spec.switches.size();
  t.switches_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const TopologySpec::Switch& in = spec.switches[i];
    if (in.name.empty()) return Refuse(src, in.line, "empty switch name");
    auto [it, inserted] = t.switch_index_.emplace(in.name, static_cast<int>(i));
    if (!inserted) {
      return Refuse(
          src, in.line,
          absl::StrCat("switch ", in.name, " is defined twice",
                       LineNote(spec.switches[it->second].line), " and here"));
    }
    Switch& out = t.switches_[i];
    out.name = in.name;
    out.description = in.description;
    out.link_speed = in.link_speed;
  }

  // Links. Parallel cables add up; `links` keeps one entry per pair.
  std::map<std::pair<int, int>, uint32_t> links;
  std::vector<int> first_link_line(n, 0);
  for (const TopologySpec::Link& link : spec.links) {
    const int a = t.SwitchIndex(link.a);
    const int b = t.SwitchIndex(link.b);
    if (a < 0 || b < 0) {
      const std::string& unknown = a < 0 ? link.a : link.b;
      return Refuse(
          src, link.line,
          directed && a >= 0
              ? absl::StrCat("switch ", link.a, " lists child switch ", link.b,
                             ", which is not defined")
              : absl::StrCat("link between ", link.a, " and ", link.b,
                             " names an unknown switch ", unknown));
    }
    if (link.count == 0) {
      return Refuse(src, link.line,
                    absl::StrCat("link between ", link.a, " and ", link.b,
                                 " has a count of 0"));
    }
    if (directed) {
      if (a == b) {
        return Refuse(src, link.line,
                      absl::StrCat("switch loop: ", link.a,
                                   " lists itself as a child switch"));
      }
      if (!links.emplace(std::make_pair(a, b), link.count).second) {
        return Refuse(src, link.line,
                      absl::StrCat("switch ", link.a, " lists child switch ",
                                   link.b, " twice"));
      }
      if (first_link_line[a] == 0) first_link_line[a] = link.line;
    } else {
      if (a == b) continue;
      links[std::minmax(a, b)] += link.count;
    }
  }

  // Attachments.
  struct Seen {
    int switch_index;
    int line;
  };
  std::map<std::string, Seen, std::less<>> first_seen;
  std::set<std::pair<std::string, int>> attached;
  for (const TopologySpec::Attachment& at : spec.attachments) {
    if (at.node.empty()) return Refuse(src, at.line, "empty node name");
    const int s = t.SwitchIndex(at.switch_name);
    if (s < 0) {
      return Refuse(
          src, at.line,
          absl::StrCat("node ", at.node, " is attached to an unknown switch ",
                       at.switch_name));
    }
    auto [seen, first] = first_seen.emplace(at.node, Seen{s, at.line});
    if (!first && !spec.allow_multi_homed_nodes) {
      const std::string& other = t.switches_[seen->second.switch_index].name;
      return Refuse(
          src, at.line,
          seen->second.switch_index == s
              ? absl::StrCat("node ", at.node, " is listed twice under switch ",
                             other, LineNote(seen->second.line), " and here")
              : absl::StrCat("node ", at.node, " is listed under switch ",
                             other, LineNote(seen->second.line),
                             " and again under switch ", at.switch_name));
    }
    if (first) t.node_names_.push_back(at.node);
    if (attached.emplace(at.node, s).second) {
      t.switches_[s].nodes.push_back(at.node);
      t.node_leaves_[at.node].push_back(s);
    }
  }

  // Levels, then each link sorted into parents, children and peers.
  std::vector<int> level(n, 0);
  if (directed) {
    std::vector<std::vector<int>> children(n);
    std::vector<std::vector<int>> parents(n);
    for (const auto& [ab, count] : links) {
      children[ab.first].push_back(ab.second);
      parents[ab.second].push_back(ab.first);
    }
    absl::Status levels =
        LevelsFromChildren(spec, children, parents, first_link_line, &level);
    if (!levels.ok()) return levels;
    for (const auto& [ab, count] : links) {
      t.switches_[ab.first].children.push_back(
          {t.switches_[ab.second].name, count});
      t.switches_[ab.second].parents.push_back(
          {t.switches_[ab.first].name, count});
    }
  } else {
    std::vector<std::vector<int>> adjacent(n);
    for (const auto& [ab, count] : links) {
      adjacent[ab.first].push_back(ab.second);
      adjacent[ab.second].push_back(ab.first);
    }
    std::vector<int> hops(n, -1);
    std::deque<int> queue;
    for (size_t i = 0; i < n; ++i) {
      if (!t.switches_[i].nodes.empty()) {
        hops[i] = 0;
        queue.push_back(static_cast<int>(i));
      }
    }
    while (!queue.empty()) {
      const int s = queue.front();
      queue.pop_front();
      for (int m : adjacent[s]) {
        if (hops[m] < 0) {
          hops[m] = hops[s] + 1;
          queue.push_back(m);
        }
      }
    }
    // Switches that reach no node are placed at level 0: nothing is above
    // or below them that matters for placement.
    for (size_t i = 0; i < n; ++i) level[i] = std::max(hops[i], 0);
    for (const auto& [ab, count] : links) {
      auto [lo, hi] = ab;
      if (level[lo] > level[hi]) std::swap(lo, hi);
      if (level[lo] == level[hi]) {
        t.switches_[lo].peers.push_back({t.switches_[hi].name, count});
        t.switches_[hi].peers.push_back({t.switches_[lo].name, count});
      } else {
        t.switches_[lo].parents.push_back({t.switches_[hi].name, count});
        t.switches_[hi].children.push_back({t.switches_[lo].name, count});
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    t.switches_[i].level = level[i];
    t.level_count_ = std::max(t.level_count_, level[i] + 1);
  }
  t.ComputeLeafDistances();
  t.ComputeParts();
  return t;
}

int Topology::SwitchIndex(std::string_view name) const {
  auto it = switch_index_.find(name);
  return it == switch_index_.end() ? -1 : it->second;
}

const Topology::Switch* Topology::FindSwitch(std::string_view name) const {
  const int i = SwitchIndex(name);
  return i < 0 ? nullptr : &switches_[i];
}

std::vector<std::string> Topology::Roots() const {
  std::vector<std::string> roots;
  for (const Switch& s : switches_) {
    if (s.parents.empty()) roots.push_back(s.name);
  }
  return roots;
}

bool Topology::HasNode(std::string_view node) const {
  return node_leaves_.find(node) != node_leaves_.end();
}

const std::vector<int>* Topology::LeavesOf(std::string_view node) const {
  auto it = node_leaves_.find(node);
  return it == node_leaves_.end() ? nullptr : &it->second;
}

std::vector<std::string> Topology::LeafSwitchesOf(std::string_view node) const {
  std::vector<std::string> names;
  if (const std::vector<int>* leaves = LeavesOf(node)) {
    for (int s : *leaves) names.push_back(switches_[s].name);
  }
  return names;
}

std::optional<std::string> Topology::LeafSwitchOf(std::string_view node) const {
  const std::vector<int>* leaves = LeavesOf(node);
  if (leaves == nullptr) return std::nullopt;
  return switches_[leaves->front()].name;
}

void Topology::ComputeLeafDistances() {
  const size_t n = switches_.size();
  leaf_slot_.assign(n, -1);
  std::vector<int> leaves;
  for (size_t i = 0; i < n; ++i) {
    if (!switches_[i].nodes.empty()) {
      leaf_slot_[i] = static_cast<int>(leaves.size());
      leaves.push_back(static_cast<int>(i));
    }
  }
  leaf_rows_ = static_cast<int>(leaves.size());
  leaf_hops_.assign(leaves.size() * leaves.size(), kNoPath);
  if (leaves.empty()) return;

  std::vector<std::vector<int>> adjacent(n);
  for (size_t i = 0; i < n; ++i) {
    for (const auto* list :
         {&switches_[i].parents, &switches_[i].children, &switches_[i].peers}) {
      for (const Neighbor& m : *list)
        adjacent[i].push_back(SwitchIndex(m.name));
    }
  }
  std::vector<int> hops(n);
  std::deque<int> queue;
  for (int row = 0; row < leaf_rows_; ++row) {
    std::fill(hops.begin(), hops.end(), -1);
    hops[leaves[row]] = 0;
    queue.assign(1, leaves[row]);
    while (!queue.empty()) {
      const int s = queue.front();
      queue.pop_front();
      if (leaf_slot_[s] >= 0) {
        leaf_hops_[static_cast<size_t>(row) * leaves.size() + leaf_slot_[s]] =
            static_cast<uint16_t>(std::min<int>(hops[s], kNoPath - 1));
      }
      for (int m : adjacent[s]) {
        if (hops[m] < 0) {
          hops[m] = hops[s] + 1;
          queue.push_back(m);
        }
      }
    }
  }
}

void Topology::ComputeParts() {
  const size_t n = switches_.size();
  // Union-find over switches: links join their ends, a node its leaves.
  std::vector<int> up(n);
  for (size_t i = 0; i < n; ++i) up[i] = static_cast<int>(i);
  const auto find = [&up](int s) {
    while (up[s] != s) s = up[s] = up[up[s]];
    return s;
  };
  const auto join = [&](int a, int b) {
    a = find(a);
    b = find(b);
    if (a != b) up[std::max(a, b)] = std::min(a, b);  // lowest index roots
  };
  for (size_t i = 0; i < n; ++i) {
    for (const auto* list : {&switches_[i].children, &switches_[i].peers}) {
      for (const Neighbor& m : *list) {
        join(static_cast<int>(i), SwitchIndex(m.name));
      }
    }
  }
  for (const auto& [node, leaves] : node_leaves_) {
    for (int leaf : leaves) join(leaves.front(), leaf);
  }
  // Parts numbered by their first switch in spec order (the root of each
  // set is its lowest index).
  std::vector<int> part_of_root(n, -1);
  part_of_switch_.assign(n, -1);
  parts_.clear();
  for (size_t i = 0; i < n; ++i) {
    const int root = find(static_cast<int>(i));
    if (part_of_root[root] < 0) {
      part_of_root[root] = static_cast<int>(parts_.size());
      parts_.emplace_back();
    }
    part_of_switch_[i] = part_of_root[root];
  }
  std::vector<std::vector<int>> tops(parts_.size());
  for (size_t i = 0; i < n; ++i) {
    if (switches_[i].parents.empty()) {
      tops[part_of_switch_[i]].push_back(static_cast<int>(i));
    }
  }
  for (size_t p = 0; p < parts_.size(); ++p) {
    // Undirected fabrics put peers at the top level, all without parents.
    std::stable_sort(tops[p].begin(), tops[p].end(), [&](int a, int b) {
      return switches_[a].level > switches_[b].level;
    });
    for (int s : tops[p]) parts_[p].tops.push_back(switches_[s].name);
  }
  for (const std::string& node : node_names_) {
    parts_[part_of_switch_[node_leaves_.find(node)->second.front()]]
        .nodes.push_back(node);
  }
}

int Topology::PartOf(std::string_view node) const {
  const std::vector<int>* leaves = LeavesOf(node);
  return leaves == nullptr ? -1 : part_of_switch_[leaves->front()];
}

std::optional<int> Topology::Distance(std::string_view a,
                                      std::string_view b) const {
  const std::vector<int>* la = LeavesOf(a);
  const std::vector<int>* lb = LeavesOf(b);
  if (la == nullptr || lb == nullptr) return std::nullopt;
  if (a == b) return 0;
  int best = kNoPath;
  for (int x : *la) {
    for (int y : *lb) {
      const size_t cell = static_cast<size_t>(leaf_slot_[x]) * leaf_rows_ +
                          static_cast<size_t>(leaf_slot_[y]);
      best = std::min<int>(best, leaf_hops_[cell]);
    }
  }
  if (best == kNoPath) return std::nullopt;
  return best + 2;
}

absl::StatusOr<std::vector<std::string>> Topology::NodesUnder(
    std::string_view switch_name) const {
  const int top = SwitchIndex(switch_name);
  if (top < 0) {
    return absl::NotFoundError(
        absl::StrCat("no switch named ", std::string(switch_name)));
  }
  std::vector<std::string> nodes;
  std::set<std::string_view> seen_nodes;
  std::vector<bool> visited(switches_.size(), false);
  std::vector<int> stack = {top};
  visited[top] = true;
  while (!stack.empty()) {
    const int s = stack.back();
    stack.pop_back();
    for (const std::string& node : switches_[s].nodes) {
      if (seen_nodes.insert(node).second) nodes.push_back(node);
    }
    // Reversed so that the first child is visited first.
    const std::vector<Neighbor>& children = switches_[s].children;
    for (auto it = children.rbegin(); it != children.rend(); ++it) {
      const int c = SwitchIndex(it->name);
      if (!visited[c]) {
        visited[c] = true;
        stack.push_back(c);
      }
    }
  }
  return nodes;
}

std::string Topology::Describe() const {
  std::string out =
      absl::StrCat("topology: ", switches_.size(), " switches, ", level_count_,
                   " levels, ", node_names_.size(), " nodes\n");
  std::vector<const Switch*> order;
  for (const Switch& s : switches_) order.push_back(&s);
  std::sort(order.begin(), order.end(), [](const Switch* x, const Switch* y) {
    if (x->level != y->level) return x->level > y->level;
    return x->name < y->name;
  });
  const auto neighbors = [](std::vector<Neighbor> list) {
    std::sort(
        list.begin(), list.end(),
        [](const Neighbor& x, const Neighbor& y) { return x.name < y.name; });
    return absl::StrJoin(list, ",", [](std::string* o, const Neighbor& m) {
      absl::StrAppend(o, m.name, "*", m.links);
    });
  };
  for (const Switch* s : order) {
    absl::StrAppend(&out, "level ", s->level, " ", s->name);
    if (!s->parents.empty()) {
      absl::StrAppend(&out, " parents=", neighbors(s->parents));
    }
    if (!s->children.empty()) {
      absl::StrAppend(&out, " children=", neighbors(s->children));
    }
    if (!s->peers.empty()) {
      absl::StrAppend(&out, " peers=", neighbors(s->peers));
    }
    if (!s->nodes.empty()) {
      absl::StrAppend(&out, " nodes=", CompressHostlist(s->nodes));
    }
    out += '\n';
  }
  return out;
}

}  // namespace gantry
