// The switch-tree model: levels, leaf lookup, distances, subtrees, and the
// validation that refuses a node named twice, loops and unknown switches.

#include "common/topology.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace gantry {
namespace topology_test {

using LinkKind = TopologySpec::LinkKind;

TopologySpec::Switch Sw(std::string name, int line = 0) {
  TopologySpec::Switch s;
  s.name = std::move(name);
  s.line = line;
  return s;
}
TopologySpec::Link Ln(std::string a, std::string b, uint32_t count = 1,
                      int line = 0) {
  return {std::move(a), std::move(b), count, line};
}
TopologySpec::Attachment At(std::string node, std::string sw, int line = 0) {
  return {std::move(node), std::move(sw), line};
}

// spine -> {leaf1, leaf2}; leaf1: n1 n2; leaf2: n3 n4; a lone leaf3: n5.
TopologySpec TwoLevelSpec() {
  TopologySpec spec;
  spec.source = "test.conf";
  spec.switches = {Sw("spine", 1), Sw("leaf1", 2), Sw("leaf2", 3),
                   Sw("leaf3", 4)};
  spec.links = {{"spine", "leaf1", 1, 1}, {"spine", "leaf2", 1, 1}};
  spec.attachments = {{"n1", "leaf1", 2},
                      {"n2", "leaf1", 2},
                      {"n3", "leaf2", 3},
                      {"n4", "leaf2", 3},
                      {"n5", "leaf3", 4}};
  return spec;
}

Topology MustBuild(TopologySpec spec) {
  absl::StatusOr<Topology> t = Topology::Build(std::move(spec));
  INFO(t.status().ToString());
  REQUIRE(t.ok());
  return *std::move(t);
}

TEST_CASE("a two-level tree: levels, roots, leaves, subtrees") {
  const Topology t = MustBuild(TwoLevelSpec());
  CHECK(t.switches().size() == 4);
  CHECK(t.level_count() == 2);
  CHECK(t.FindSwitch("spine")->level == 1);
  CHECK(t.FindSwitch("leaf1")->level == 0);
  CHECK(t.FindSwitch("leaf3")->level == 0);
  CHECK(t.FindSwitch("nope") == nullptr);
  CHECK(t.Roots() == std::vector<std::string>{"spine", "leaf3"});
  CHECK(t.nodes() == std::vector<std::string>{"n1", "n2", "n3", "n4", "n5"});
  CHECK(t.HasNode("n3"));
  CHECK_FALSE(t.HasNode("n9"));
  CHECK(t.LeafSwitchOf("n3") == "leaf2");
  CHECK(t.LeafSwitchesOf("n3") == std::vector<std::string>{"leaf2"});
  CHECK_FALSE(t.LeafSwitchOf("n9").has_value());
  CHECK(t.LeafSwitchesOf("n9").empty());
  CHECK(*t.NodesUnder("spine") ==
        std::vector<std::string>{"n1", "n2", "n3", "n4"});
  CHECK(*t.NodesUnder("leaf3") == std::vector<std::string>{"n5"});
  CHECK(t.NodesUnder("nope").status().code() == absl::StatusCode::kNotFound);
  CHECK(t.Describe() ==
        "topology: 4 switches, 2 levels, 5 nodes\n"
        "level 1 spine children=leaf1*1,leaf2*1\n"
        "level 0 leaf1 parents=spine*1 nodes=n[1-2]\n"
        "level 0 leaf2 parents=spine*1 nodes=n[3-4]\n"
        "level 0 leaf3 nodes=n5\n");
}

TEST_CASE("distance counts cables between nodes") {
  const Topology t = MustBuild(TwoLevelSpec());
  struct Row {
    const char* a;
    const char* b;
    std::optional<int> distance;
  };
  for (const Row& row : {
           Row{"n1", "n1", 0}, Row{"n1", "n2", 2}, Row{"n1", "n3", 4},
           Row{"n4", "n2", 4},
           Row{"n1", "n5", std::nullopt},  // disconnected trunk
           Row{"n1", "n9", std::nullopt},  // unknown node
       }) {
    INFO(row.a << " " << row.b);
    CHECK(t.Distance(row.a, row.b) == row.distance);
  }
}

TEST_CASE("a three-level tree counts six cables across the root") {
  TopologySpec spec;
  spec.switches = {Sw("root"), Sw("g1"), Sw("g2"),
                   Sw("l1"),   Sw("l2"), Sw("l3")};
  spec.links = {Ln("root", "g1"), Ln("root", "g2"), Ln("g1", "l1"),
                Ln("g1", "l2"), Ln("g2", "l3")};
  spec.attachments = {At("a", "l1"), At("b", "l2"), At("c", "l3")};
  const Topology t = MustBuild(spec);
  CHECK(t.level_count() == 3);
  CHECK(t.FindSwitch("root")->level == 2);
  CHECK(t.Distance("a", "b") == 4);
  CHECK(t.Distance("a", "c") == 6);
  CHECK(*t.NodesUnder("g1") == std::vector<std::string>{"a", "b"});
}

TEST_CASE("a parent's level is one above its highest child") {
  // root has a leaf child directly and a deeper branch.
  TopologySpec spec;
  spec.switches = {Sw("root"), Sw("mid"), Sw("leafA"), Sw("leafB")};
  spec.links = {Ln("root", "mid"), Ln("mid", "leafA"), Ln("root", "leafB")};
  spec.attachments = {At("a", "leafA"), At("b", "leafB")};
  const Topology t = MustBuild(spec);
  CHECK(t.FindSwitch("root")->level == 2);
  CHECK(t.FindSwitch("leafB")->level == 0);
  CHECK(t.Distance("a", "b") == 5);
}

TEST_CASE("undirected links: levels from the leaves, parallel cables add up") {
  // A fat tree: two spines, two leaves, each leaf cabled twice to each spine
  // (once per direction in the input, as ibnetdiscover lists both ends),
  // plus a link between the spines.
  TopologySpec spec;
  spec.link_kind = LinkKind::kUndirected;
  spec.allow_multi_homed_nodes = true;
  spec.switches = {Sw("s1"), Sw("s2"), Sw("l1"), Sw("l2"), Sw("lonely")};
  spec.links = {Ln("l1", "s1", 2), Ln("l1", "s2", 2), Ln("l2", "s1", 2),
                Ln("s2", "l2", 1), Ln("l2", "s2", 1), Ln("s1", "s2", 1),
                Ln("l1", "l1", 1)};  // self link: ignored
  // h1 has one HCA on each leaf (rails); h2 only on l2.
  spec.attachments = {At("h1", "l1"), At("h1", "l2"), At("h2", "l2"),
                      At("h2", "l2")};
  const Topology t = MustBuild(spec);
  CHECK(t.level_count() == 2);
  CHECK(t.FindSwitch("s1")->level == 1);
  CHECK(t.FindSwitch("lonely")->level == 0);
  CHECK(t.FindSwitch("l2")->parents.size() == 2);
  CHECK(t.FindSwitch("s1")->peers.size() == 1);
  CHECK(t.LeafSwitchesOf("h1") == std::vector<std::string>{"l1", "l2"});
  CHECK(t.LeafSwitchOf("h1") == "l1");
  CHECK(t.FindSwitch("l2")->nodes == std::vector<std::string>{"h1", "h2"});
  CHECK(t.Distance("h1", "h2") == 2);  // via the rail on l2
  CHECK(*t.NodesUnder("s2") == std::vector<std::string>{"h1", "h2"});
  CHECK(t.Describe() ==
        "topology: 5 switches, 2 levels, 2 nodes\n"
        "level 1 s1 children=l1*2,l2*2 peers=s2*1\n"
        "level 1 s2 children=l1*2,l2*2 peers=s1*1\n"
        "level 0 l1 parents=s1*2,s2*2 nodes=h1\n"
        "level 0 l2 parents=s1*2,s2*2 nodes=h[1-2]\n"
        "level 0 lonely\n");
}

TEST_CASE("an empty topology answers queries") {
  const Topology t = MustBuild(TopologySpec{});
  CHECK(t.level_count() == 0);
  CHECK(t.nodes().empty());
  CHECK(t.Roots().empty());
  CHECK_FALSE(t.Distance("a", "b").has_value());
  const Topology defaulted;
  CHECK(defaulted.switches().empty());
}

TEST_CASE("bad trees are refused with the reason and the line") {
  struct Row {
    const char* what;
    TopologySpec spec;
    const char* message;  // the whole message
  };
  const auto spec = [](std::vector<TopologySpec::Switch> switches,
                       std::vector<TopologySpec::Link> links,
                       std::vector<TopologySpec::Attachment> attachments) {
    TopologySpec s;
    s.source = "t.conf";
    s.switches = std::move(switches);
    s.links = std::move(links);
    s.attachments = std::move(attachments);
    return s;
  };
  const std::vector<Row> rows = {
      {"node twice, two switches",
       spec({Sw("a", 1), Sw("b", 2)}, {}, {{"n1", "a", 1}, {"n1", "b", 2}}),
       "t.conf:2: node n1 is listed under switch a (line 1) and again under "
       "switch b"},
      {"node twice, same switch",
       spec({Sw("a", 1)}, {}, {{"n1", "a", 1}, {"n1", "a", 1}}),
       "t.conf:1: node n1 is listed twice under switch a (line 1) and here"},
      {"switch defined twice", spec({Sw("a", 3), Sw("a", 7)}, {}, {}),
       "t.conf:7: switch a is defined twice (line 3) and here"},
      {"unknown child", spec({Sw("a", 1)}, {{"a", "zz", 1, 1}}, {}),
       "t.conf:1: switch a lists child switch zz, which is not defined"},
      {"unknown switch for a node", spec({Sw("a", 1)}, {}, {{"n", "b", 4}}),
       "t.conf:4: node n is attached to an unknown switch b"},
      {"self loop", spec({Sw("a", 1)}, {{"a", "a", 1, 1}}, {}),
       "t.conf:1: switch loop: a lists itself as a child switch"},
      {"loop of three",
       spec({Sw("top"), Sw("a"), Sw("b"), Sw("c")},
            {{"top", "a", 1, 1},
             {"a", "b", 1, 2},
             {"b", "c", 1, 3},
             {"c", "a", 1, 4}},
            {}),
       "t.conf:2: switch loop: a -> b -> c -> a"},
      {"child listed twice",
       spec({Sw("a"), Sw("b")}, {{"a", "b", 1, 5}, {"a", "b", 1, 5}}, {}),
       "t.conf:5: switch a lists child switch b twice"},
      {"empty switch name", spec({Sw("", 9)}, {}, {}),
       "t.conf:9: empty switch name"},
      {"empty node name", spec({Sw("a")}, {}, {{"", "a", 2}}),
       "t.conf:2: empty node name"},
      {"zero link count", spec({Sw("a"), Sw("b")}, {{"a", "b", 0, 3}}, {}),
       "t.conf:3: link between a and b has a count of 0"},
  };
  for (const Row& row : rows) {
    INFO(row.what);
    absl::StatusOr<Topology> t = Topology::Build(row.spec);
    REQUIRE_FALSE(t.ok());
    CHECK(t.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(t.status().message()) == row.message);
  }
}

TEST_CASE("undirected links may not name unknown switches either") {
  TopologySpec spec;
  spec.link_kind = LinkKind::kUndirected;
  spec.switches = {Sw("a")};
  spec.links = {{"a", "ghost", 1, 0}};
  absl::StatusOr<Topology> t = Topology::Build(spec);
  REQUIRE_FALSE(t.ok());
  CHECK(std::string(t.status().message()) ==
        "link between a and ghost names an unknown switch ghost");
}

}  // namespace topology_test
}  // namespace gantry
