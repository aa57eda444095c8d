// Slurm topology.conf reading: the real files in ../shared/data/fabric/slurm
// (expected figures counted from the files with a separate script: switches,
// expanded node names, levels, each sampled node's chain of switches) and
// hand-written edge cases for syntax and refusals.

#include "common/slurm_topology_parser.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/unit/support/shared_data.h"

namespace gantry {
namespace slurm_topology_parser_test {

namespace fs = std::filesystem;

std::string SlurmDir() { return testing::SharedDataPath("fabric/slurm"); }

Topology MustParse(std::string_view text) {
  absl::StatusOr<Topology> t = ParseSlurmTopology(text, "topology.conf");
  INFO(t.status().ToString());
  REQUIRE(t.ok());
  return *std::move(t);
}

std::string ErrorOf(std::string_view text) {
  absl::StatusOr<Topology> t = ParseSlurmTopology(text, "topology.conf");
  REQUIRE_FALSE(t.ok());
  return std::string(t.status().message());
}

struct Sample {
  const char* a;
  const char* b;
  std::optional<int> distance;
};

struct FileCase {
  const char* file;
  size_t switches;
  size_t nodes;
  int levels;
  std::vector<std::string> roots;
  std::vector<std::pair<const char*, const char*>> leaf_of;  // node, leaf
  std::vector<Sample> distances;
};

TEST_CASE("the tree files in shared/data load with the expected shape") {
  GANTRY_REQUIRE_SHARED_DATA(SlurmDir());
  const std::vector<FileCase> cases = {
      // root -> im[0-1] -> grp[10-35] -> leaf[100-599] (20 nodes each).
      {"slurm-test133-10k-nodes-3level-tree.topology.conf",
       529,
       10000,
       4,
       {"root"},
       {{"peta10000", "leaf100"},
        {"peta10020", "leaf101"},
        {"peta19999", "leaf599"}},
       {{"peta10000", "peta10019", 2},
        {"peta10000", "peta10020", 4},    // leaf100, leaf101 under grp10
        {"peta10000", "peta10400", 6},    // grp10, grp11 under im0
        {"peta10000", "peta19999", 8}}},  // im0 and im1 under root
      {"slurm-test133-disconnected-trunks.topology.conf",
       7,
       40,
       2,
       {"spineA", "spineB", "leafC"},
       {{"node1", "leafA1"}, {"node33", "leafC"}},
       {{"node1", "node9", 4},
        {"node1", "node17", std::nullopt},
        {"node33", "node40", 2},
        {"node33", "node1", std::nullopt}}},
      {"topograph-expected-tree.topology.conf",
       19,
       96,
       3,
       {"switch.3.1"},
       {{"srv1101", "switch.1.1"}, {"srv6208", "switch.1.12"}},
       {{"srv1101", "srv1108", 2},
        {"srv1101", "srv1201", 4},
        {"srv1101", "srv2101", 6}}},
  };
  for (const FileCase& c : cases) {
    DYNAMIC_SECTION(c.file) {
      const std::string path = SlurmDir() + "/" + c.file;
      absl::StatusOr<Topology> t = LoadSlurmTopologyFile(path);
      INFO(t.status().ToString());
      REQUIRE(t.ok());
      CHECK(t->source() == path);
      CHECK(t->switches().size() == c.switches);
      CHECK(t->nodes().size() == c.nodes);
      CHECK(t->level_count() == c.levels);
      CHECK(t->Roots() == c.roots);
      for (const auto& [node, leaf] : c.leaf_of) {
        INFO(node);
        CHECK(t->LeafSwitchOf(node) == leaf);
      }
      for (const Sample& s : c.distances) {
        INFO(s.a << " " << s.b);
        CHECK(t->Distance(s.a, s.b) == s.distance);
      }
    }
  }
}

TEST_CASE("the 10,000-node tree: subtree sizes") {
  GANTRY_REQUIRE_SHARED_DATA(SlurmDir());
  absl::StatusOr<Topology> t = LoadSlurmTopologyFile(
      SlurmDir() + "/slurm-test133-10k-nodes-3level-tree.topology.conf");
  REQUIRE(t.ok());
  CHECK(t->NodesUnder("root")->size() == 10000);
  CHECK(t->NodesUnder("grp22")->size() == 200);  // leaf[340-349]: 10 leaves
  CHECK(t->NodesUnder("leaf599")->size() == 20);
  CHECK(t->FindSwitch("im1")->children.size() == 13);
  CHECK(t->FindSwitch("root")->level == 3);
}

TEST_CASE("block and yaml topologies are refused as not supported yet") {
  GANTRY_REQUIRE_SHARED_DATA(SlurmDir());
  for (const char* file : {"slurm-block-32nodes.topology.conf",
                           "topograph-expected-block.topology.conf",
                           "slurm-manpage-example.topology.yaml"}) {
    INFO(file);
    absl::StatusOr<Topology> t = LoadSlurmTopologyFile(SlurmDir() + "/" + file);
    REQUIRE_FALSE(t.ok());
    CHECK(t.status().code() == absl::StatusCode::kUnimplemented);
    CHECK(std::string(t.status().message()).find("not supported yet") !=
          std::string::npos);
    CHECK(std::string(t.status().message()).find(file) != std::string::npos);
  }
  // The same yaml content under another name is recognised by its content.
  std::ifstream in(SlurmDir() + "/slurm-manpage-example.topology.yaml");
  const std::string yaml((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
  CHECK(ParseSlurmTopology(yaml, "topo.conf").status().code() ==
        absl::StatusCode::kUnimplemented);
}

TEST_CASE("syntax: comments, case, quotes, continuation, LinkSpeed") {
  const Topology t = MustParse(
      "# a comment line\n"
      "\n"
      "switchname=spine SWITCHES=\"leaf[1-2]\"   # trailing comment\r\n"
      "SwitchName=leaf1 Nodes=n[01-02] \\\n"
      "    LinkSpeed=100\n"
      "SwitchName=leaf2 \\\n"
      "  \\\n"
      "  Nodes=n03,n04\n"
      "   \t\n");
  CHECK(t.switches().size() == 3);
  CHECK(t.FindSwitch("leaf1")->link_speed == 100);
  CHECK(t.FindSwitch("leaf2")->link_speed == 1);  // Slurm's default
  CHECK(t.nodes() == std::vector<std::string>{"n01", "n02", "n03", "n04"});
  CHECK(t.Distance("n01", "n04") == 4);
}

TEST_CASE("an empty file is an empty topology") {
  const Topology t = MustParse("# nothing\n\n");
  CHECK(t.switches().empty());
}

TEST_CASE("bad files are refused with the file, the line and the reason") {
  struct Row {
    const char* text;
    const char* message;
  };
  for (const Row& row : {
           Row{"SwitchName=a Nodes=n1\nSwitchName=b Nodes=n1\n",
               "topology.conf:2: node n1 is listed under switch a (line 1) "
               "and again under switch b"},
           Row{"SwitchName=a Nodes=n[1-3],n2\n",
               "topology.conf:1: node n2 is listed twice under switch a "
               "(line 1) and here"},
           Row{"SwitchName=a Switches=b\nSwitchName=b Switches=a\n",
               "topology.conf:1: switch loop: a -> b -> a"},
           Row{"SwitchName=a Switches=ghost\n",
               "topology.conf:1: switch a lists child switch ghost, which is "
               "not defined"},
           Row{"SwitchName=a Nodes=n1\n\nSwitchName=a Nodes=n2\n",
               "topology.conf:3: switch a is defined twice (line 1) and here"},
           Row{"SwitchName=a Nodes=n1 Switches=b\nSwitchName=b Nodes=n2\n",
               "topology.conf:1: switch a has both child switches and nodes"},
           Row{"\n\nSwitchName=a LinkSpeed=5\n",
               "topology.conf:3: switch a has neither child switches nor "
               "nodes"},
           Row{"SwitchName=a Nodes=n[3-1]\n",
               "topology.conf:1: Nodes=n[3-1] of switch a: "},  // + hostlist's
           Row{"SwitchName=a Nodes=n[1-70000]\n",
               "topology.conf:1: Nodes=n[1-70000] of switch a: "},
           Row{"SwitchName=a Nodes=\n",
               "topology.conf:1: Nodes= of switch a is empty"},
           Row{"SwitchName=a Nodes=n1 LinkSpeed=fast\n",
               "topology.conf:1: LinkSpeed=fast of switch a is not an "
               "unsigned integer"},
           Row{"SwitchName=a Nodes=n1 Nodes=n2\n",
               "topology.conf:1: Nodes is given twice for switch a"},
           Row{"SwitchName=a Nodes=n1 Speed=3\n",
               "topology.conf:1: unknown keyword Speed for switch a (expected "
               "Switches, Nodes or LinkSpeed)"},
           Row{"NodeName=n1 Switch=a\n",
               "topology.conf:1: unknown keyword NodeName (a line starts with "
               "SwitchName=)"},
           Row{"SwitchName=a Nodes=n1 garbage\n",
               "topology.conf:1: expected Key=Value, found \"garbage\""},
           Row{"SwitchName=a Nodes=\"n1\n",
               "topology.conf:1: unterminated quote in the value of Nodes"},
           Row{"SwitchName= Nodes=n1\n", "topology.conf:1: empty SwitchName"},
           Row{"SwitchName=a Nodes=n1 SwitchName=b\n",
               "topology.conf:1: a second SwitchName on one line (one switch "
               "per line)"},
           Row{"SwitchName=a Nodes=n1\nSwitchName=b Nodes=n2 \\\n",
               "topology.conf:2: the last line ends with '\\' but the file "
               "ends there"},
       }) {
    INFO(row.text);
    const std::string message = ErrorOf(row.text);
    CHECK(message.substr(0, std::string(row.message).size()) == row.message);
  }
}

TEST_CASE("an over-long switch name is refused as Slurm does") {
  const std::string name(65, 's');
  CHECK(ErrorOf("SwitchName=" + name + " Nodes=n1\n") ==
        "topology.conf:1: SwitchName " + name +
            " is longer than 64 characters");
}

TEST_CASE("a missing topology file is NOT_FOUND") {
  const fs::path dir = fs::temp_directory_path() /
                       ("gantry_slurm_topology_test_" +
                        std::to_string(static_cast<long>(::getpid())));
  fs::create_directories(dir);
  CHECK(LoadSlurmTopologyFile((dir / "absent.conf").string()).status().code() ==
        absl::StatusCode::kNotFound);
  CHECK(LoadSlurmTopologyFile(dir.string()).status().code() ==
        absl::StatusCode::kInvalidArgument);
  const fs::path file = dir / "topology.conf";
  std::ofstream(file) << "SwitchName=s Nodes=a,b\n";
  absl::StatusOr<Topology> t = LoadSlurmTopologyFile(file.string());
  CHECK(t.ok());
  fs::remove_all(dir);
}

}  // namespace slurm_topology_parser_test
}  // namespace gantry
