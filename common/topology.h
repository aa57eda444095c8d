// The network switch tree of a cluster: switches arranged in levels (leaf
// switches at level 0, the switches above them at 1, 2, ...), the links
// between switches with how many cables each has, and the nodes attached to
// leaf switches. The controller uses it to place a job's nodes close
// together; parsers of Slurm's topology.conf and of ibnetdiscover output
// (slurm_topology_parser.h, ibnetdiscover_parser.h) produce it.
//
// A Topology is built once from a TopologySpec, validated (a node named twice,
// a loop, a reference to an unknown switch are refused with the reason), and
// immutable afterwards: every const method is safe to call from any number
// of threads at once. Build is a pure function.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry {

// What a parser read, before validation. Line numbers (1-based; 0: unknown)
// and `source` (a file name) only serve error messages.
struct TopologySpec {
  // How `links` are to be read.
  enum class LinkKind {
    // `a` is the parent of `b` (Slurm's "SwitchName=a Switches=b"). Levels
    // come from the child relation: a switch without child switches is at
    // level 0, any other one level above its highest child. A cycle is an
    // error.
    kParentChild,
    // Cables with no direction (ibnetdiscover). Levels come from the hop
    // count to the nearest switch that has nodes attached; a neighbour one
    // level up is a parent, one level down a child, on the same level a
    // peer. Links of a switch to itself are ignored.
    kUndirected,
  };
  struct Switch {
    std::string name;
    std::string description;  // free text (ibnetdiscover node description)
    uint32_t link_speed = 1;  // Slurm's LinkSpeed (arbitrary units)
    int line = 0;
  };
  struct Link {
    std::string a;
    std::string b;
    uint32_t count = 1;  // parallel cables
    int line = 0;
  };
  struct Attachment {
    std::string node;
    std::string switch_name;
    int line = 0;
  };

  std::string source;
  LinkKind link_kind = LinkKind::kParentChild;
  // False (Slurm): a node may appear once only. True (InfiniBand with
  // rail-optimised wiring): a node may hang from several leaf switches, one
  // per HCA; repeated attachments to the same switch count once.
  bool allow_multi_homed_nodes = false;
  std::vector<Switch> switches;
  std::vector<Link> links;
  std::vector<Attachment> attachments;
};

class Topology {
 public:
  // A neighbouring switch and the number of cables to it.
  struct Neighbor {
    std::string name;
    uint32_t links = 0;
  };
  struct Switch {
    std::string name;
    std::string description;
    int level = 0;
    uint32_t link_speed = 1;
    std::vector<Neighbor> parents;   // by name
    std::vector<Neighbor> children;  // by name
    std::vector<Neighbor> peers;     // same level (kUndirected only)
    std::vector<std::string> nodes;  // attached directly, in spec order
  };

  // An empty topology (no switches, no nodes).
  Topology() = default;

  // Validates `spec` and builds the tree.
  // Errors (INVALID_ARGUMENT, message "<source>:<line>: <reason>"): an empty
  // switch or node name, a switch defined twice, a link or attachment naming
  // an unknown switch, a zero link count, the same child listed twice under
  // one parent, a loop in the parent/child relation (the cycle is named), and
  // without allow_multi_homed_nodes a node listed twice (both places named).
  static absl::StatusOr<Topology> Build(TopologySpec spec);

  const std::string& source() const { return source_; }

  // All switches, in the order of the spec.
  const std::vector<Switch>& switches() const { return switches_; }
  // nullptr when there is no such switch.
  const Switch* FindSwitch(std::string_view name) const;
  // Number of levels (highest level + 1); 0 without switches.
  int level_count() const { return level_count_; }
  // Switches without a parent, in spec order (several for disconnected
  // trunks).
  std::vector<std::string> Roots() const;

  // A connected part of the fabric: switches that reach each other over
  // links (any direction), and the nodes attached to them. Nodes of two
  // different parts cannot reach each other through any switch (Slurm's
  // "disconnected trunks"), so no job may span them.
  struct Part {
    // The part's top switches (highest level first, then spec order);
    // the first one names the part.
    std::vector<std::string> tops;
    std::vector<std::string> nodes;  // in the order first attached
    const std::string& name() const { return tops.front(); }
  };
  // In the order of each part's first switch in the spec; empty without
  // switches.
  const std::vector<Part>& parts() const { return parts_; }
  // Index into parts() of the part a node hangs from; -1 for an unknown
  // node. A multi-homed node joins the switches of its leaves into one
  // part (with one fabric per rail, the rails reach each other through the
  // nodes, as NCCL's traffic does).
  int PartOf(std::string_view node) const;

  // Every node, in the order first attached.
  const std::vector<std::string>& nodes() const { return node_names_; }
  bool HasNode(std::string_view node) const;
  // The switches a node hangs from (one, or one per rail); empty for an
  // unknown node.
  std::vector<std::string> LeafSwitchesOf(std::string_view node) const;
  // The first of LeafSwitchesOf; nullopt for an unknown node.
  std::optional<std::string> LeafSwitchOf(std::string_view node) const;

  // Cables on the shortest path between two nodes, the node-to-switch cables
  // included: 0 for the same node, 2 under the same leaf switch, 4 for two
  // leaves under one switch, and so on (the minimum over the leaves of
  // multi-homed nodes). nullopt for an unknown node or when no path exists
  // (disconnected trunks).
  std::optional<int> Distance(std::string_view a, std::string_view b) const;

  // The nodes attached to `switch_name` or to any switch below it (children,
  // recursively), each once, in the order found.
  // Errors: NOT_FOUND for an unknown switch.
  absl::StatusOr<std::vector<std::string>> NodesUnder(
      std::string_view switch_name) const;

  // A deterministic text rendering, one line per switch from the top level
  // down, for tools and golden tests:
  //   "topology: 3 switches, 2 levels, 8 nodes"
  //   "level 1 spine children=leaf1*2,leaf2*2"
  //   "level 0 leaf1 parents=spine*2 nodes=n[1-4]"
  std::string Describe() const;

 private:
  int SwitchIndex(std::string_view name) const;  // -1 when unknown
  const std::vector<int>* LeavesOf(std::string_view node) const;
  void ComputeLeafDistances();
  void ComputeParts();

  std::string source_;
  std::vector<Switch> switches_;
  std::map<std::string, int, std::less<>> switch_index_;
  int level_count_ = 0;
  std::vector<std::string> node_names_;
  // node -> indices of its leaf switches
  std::map<std::string, std::vector<int>, std::less<>> node_leaves_;
  // Switch hops between leaf switches: leaf_slot_[switch] is the row of a
  // switch with nodes (-1 otherwise); leaf_hops_ holds rows * rows entries,
  // kNoPath where unreachable. Memory grows with the square of the number
  // of leaf switches (2 bytes each: 500 leaves take 0.5 MB).
  static constexpr uint16_t kNoPath = 0xFFFF;
  std::vector<int> leaf_slot_;
  int leaf_rows_ = 0;
  std::vector<uint16_t> leaf_hops_;
  std::vector<Part> parts_;
  std::vector<int> part_of_switch_;
};

}  // namespace gantry
