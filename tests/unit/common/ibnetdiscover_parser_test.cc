// ibnetdiscover output and ibsim net files: the real dump of an NDR H100
// fabric and the ibsim examples in ../shared/data/fabric, plus malformed
// input. Expected figures were counted from the files with a separate
// script (node records by type, adapters whose system image GUID is their
// switch's, distinct host names in adapter descriptions, switches reached
// from the leaves), not taken from this code's output.

#include "common/ibnetdiscover_parser.h"

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "tests/unit/support/shared_data.h"

namespace gantry {
namespace ibnetdiscover_parser_test {

namespace fs = std::filesystem;

std::string FabricDir() { return testing::SharedDataPath("fabric"); }
const char kH100Dump[] =
    "/ibnetdiscover/topograph-dgx-h100-ndr-superpod.ibnetdiscover.out";

Fabric MustLoad(const std::string& path) {
  absl::StatusOr<Fabric> fabric = LoadIbnetdiscoverFile(path);
  INFO(fabric.status().ToString());
  REQUIRE(fabric.ok());
  return *std::move(fabric);
}

FabricTopology MustBuild(const Fabric& fabric,
                         const std::vector<AgentHcas>& agents = {}) {
  absl::StatusOr<FabricTopology> built = BuildFabricTopology(fabric, agents);
  INFO(built.status().ToString());
  REQUIRE(built.ok());
  return *std::move(built);
}

std::set<std::string> AsSet(const std::vector<std::string>& v) {
  return {v.begin(), v.end()};
}

TEST_CASE("the NDR H100 SuperPOD dump: switches, hosts, rails") {
  GANTRY_REQUIRE_SHARED_DATA(FabricDir());
  const Fabric fabric = MustLoad(FabricDir() + kH100Dump);
  size_t switches = 0;
  size_t adapters = 0;
  for (const FabricNode& node : fabric.nodes) {
    switches += node.type == FabricNode::Type::kSwitch;
    adapters += node.type == FabricNode::Type::kCa;
  }
  CHECK(switches == 40);
  CHECK(adapters == 582);

  const FabricNode& first = fabric.nodes.front();
  CHECK(first.id == "S-2c5eab0300b87b40");
  CHECK(first.guid == 0x2c5eab0300b87b40);
  CHECK(first.system_image_guid == 0x2c5eab0300b87b40);
  CHECK(first.port_count == 65);
  CHECK(first.description == "MF0;A09-P1-IBLEAF-04-04:MQM9701/U1");
  CHECK(first.ports.front().remote_id == "H-e09d7303007a4bd8");
  CHECK(first.ports.front().width_speed == "4xNDR");

  const FabricTopology t = MustBuild(fabric);
  // 40 SHARP aggregation nodes (one per QM9700) are part of their switch.
  CHECK(t.switch_adapters == 40);
  CHECK(t.topology.switches().size() == 40);
  CHECK(t.topology.level_count() == 2);
  int leaves = 0;
  int spines = 0;
  uint32_t cables = 0;
  for (const Topology::Switch& s : t.topology.switches()) {
    leaves += s.level == 0;
    spines += s.level == 1;
    if (s.level == 1) CHECK(s.name.find("IBSPINE") != std::string::npos);
    if (s.level == 0) CHECK(s.name.find("IBLEAF") != std::string::npos);
    for (const Topology::Neighbor& c : s.children) cables += c.links;
    CHECK(s.peers.empty());
  }
  CHECK(leaves == 31);
  CHECK(spines == 9);
  CHECK(cables == 532);  // leaf-spine cables, each listed at both ends
  CHECK(t.topology.FindSwitch("A09-P1-IBLEAF-04-04")->parents.front().links ==
        2);

  // 542 host adapters: 473 name one of 122 hosts, 69 keep the firmware's
  // default description and stand for themselves.
  CHECK(t.topology.nodes().size() == 122 + 69);
  CHECK(t.topology.HasNode("H-e09d730300858468"));
  CHECK(t.unserved.size() == 191);
  CHECK(t.detached.empty());
  CHECK(t.unknown_agents.empty());
  CHECK(t.node_of_port_guid.size() == 542);
  CHECK(t.node_of_port_guid.at(0xe09d7303007a4bd8) == "a08-p1-dgx-04-c01");

  // Rail-optimised: each DGX has one HCA on each of four leaves.
  CHECK(AsSet(t.topology.LeafSwitchesOf("a08-p1-dgx-04-c01")) ==
        std::set<std::string>{"A09-P1-IBLEAF-01-04", "A09-P1-IBLEAF-02-04",
                              "A09-P1-IBLEAF-03-04", "A09-P1-IBLEAF-04-04"});
  CHECK(t.topology.Distance("a08-p1-dgx-04-c01", "a08-p1-dgx-04-c02") == 2);
  CHECK(t.topology.Distance("a08-p1-dgx-04-c01", "a06-p1-dgx-02-c01") == 4);
  CHECK(t.topology.Describe().rfind("topology: 40 switches, 2 levels, 191 "
                                    "nodes\n",
                                    0) == 0);
}

TEST_CASE("agents are matched by GUID, then by host name, the rest reported") {
  GANTRY_REQUIRE_SHARED_DATA(FabricDir());
  const Fabric fabric = MustLoad(FabricDir() + kH100Dump);
  const std::vector<AgentHcas> agents = {
      // Port GUID of an adapter with the default description.
      {"dgx-unnamed", {0xe09d730300858468}},
      // No GUIDs reported: found by its name.
      {"a08-p1-dgx-04-c01", {}},
      // Port GUIDs of two of b05-p1-dgx-05-c18's HCAs, under another name.
      {"b05-c18", {0xe09d73030015b18a, 0xe09d73030015b1a6}},
      {"ghost", {0x1234}},
  };
  const FabricTopology t = MustBuild(fabric, agents);
  CHECK(t.topology.HasNode("dgx-unnamed"));
  CHECK_FALSE(t.topology.HasNode("H-e09d730300858468"));
  CHECK(t.node_of_port_guid.at(0xe09d730300858468) == "dgx-unnamed");
  CHECK(t.topology.HasNode("b05-c18"));
  // The other two HCAs of that host still carry its description's name.
  CHECK(t.topology.LeafSwitchesOf("b05-c18").size() == 2);
  CHECK(t.topology.LeafSwitchesOf("b05-p1-dgx-05-c18").size() == 2);
  CHECK(t.unknown_agents == std::vector<std::string>{"ghost"});
  CHECK(t.unserved.size() == 191 + 1 - 3);
  CHECK(std::find(t.unserved.begin(), t.unserved.end(), "a08-p1-dgx-04-c01") ==
        t.unserved.end());

  const absl::StatusOr<FabricTopology> twice = BuildFabricTopology(
      fabric, {{"x", {0xe09d7303007a4bd8}}, {"y", {0xe09d7303007a4bd8}}});
  REQUIRE_FALSE(twice.ok());
  CHECK(std::string(twice.status().message())
            .find("GUID 0xe09d7303007a4bd8 is reported by two agents, x and "
                  "y") != std::string::npos);
}

TEST_CASE("a fabric without switches is refused, naming what it found") {
  GANTRY_REQUIRE_SHARED_DATA(FabricDir());
  const std::string path =
      FabricDir() +
      "/ibnetdiscover/topograph-gb200-single-ca-bad.ibnetdiscover.out";
  const Fabric fabric = MustLoad(path);
  REQUIRE(fabric.nodes.size() == 1);
  CHECK(fabric.nodes[0].description == "dgx-gb200-n01-c1 HCA-1");
  CHECK(fabric.nodes[0].ports.empty());
  const absl::StatusOr<FabricTopology> t = BuildFabricTopology(fabric, {});
  REQUIRE_FALSE(t.ok());
  CHECK(t.status().code() == absl::StatusCode::kInvalidArgument);
  const std::string message(t.status().message());
  CHECK(message.find(path) == 0);
  CHECK(message.find("no switch") != std::string::npos);
  CHECK(message.find("dgx-gb200-n01-c1") != std::string::npos);
}

TEST_CASE("ibsim net files read as the same syntax") {
  GANTRY_REQUIRE_SHARED_DATA(FabricDir());
  SECTION("one leaf with two HCAs, a second switch above by two cables") {
    const FabricTopology t =
        MustBuild(MustLoad(FabricDir() + "/ibsim/ibsim-net"));
    CHECK(t.topology.Describe() ==
          "topology: 2 switches, 2 levels, 2 nodes\n"
          "level 1 Switch2 children=Switch1*2\n"
          "level 0 Switch1 parents=Switch2*2 nodes=Hca[1-2]\n");
    CHECK(t.topology.Distance("Hca1", "Hca2") == 2);
    CHECK(t.node_of_port_guid.empty());  // net files carry no GUIDs
  }
  SECTION("two leaves joined by two paths, dual-port HCAs") {
    const FabricTopology t =
        MustBuild(MustLoad(FabricDir() + "/ibsim/ibsim-net.2sw2path4hca2port"));
    CHECK(t.topology.Describe() ==
          "topology: 2 switches, 1 levels, 2 nodes\n"
          "level 0 Switch1 peers=Switch2*2 nodes=Hca1\n"
          "level 0 Switch2 peers=Switch1*2 nodes=Hca2\n");
    CHECK(t.topology.Distance("Hca1", "Hca2") == 3);
  }
}

TEST_CASE("ibnetdiscover as it walks an ibsim fabric") {
  // Recorded from `ibnetdiscover` over ibsim running
  // ibsim-net.2sw2path4hca2port.
  const std::string dump =
      "#\n# Topology file: generated on Wed Dec  2 10:39:02 2026\n#\n"
      "# Initiated from node 0000000000100000 port 0000000000100001\n\n"
      "vendid=0x0\ndevid=0x0\nsysimgguid=0x200001\n"
      "switchguid=0x200001(200001)\n"
      "Switch\t8 \"S-0000000000200001\"\t\t# \"Switch2\" base port 0 lid 3 "
      "lmc 0\n"
      "[1]\t\"H-0000000000100003\"[1](100004) \t\t# \"Hca2\" lid 5 4xSDR\n"
      "[2]\t\"H-0000000000100003\"[2](100005) \t\t# \"Hca2\" lid 6 4xSDR\n"
      "[3]\t\"S-0000000000200000\"[3]\t\t# \"Switch1\" lid 2 4xSDR\n"
      "[5]\t\"S-0000000000200000\"[5]\t\t# \"Switch1\" lid 2 4xSDR\n\n"
      "vendid=0x0\ndevid=0x0\nsysimgguid=0x200000\n"
      "switchguid=0x200000(200000)\n"
      "Switch\t8 \"S-0000000000200000\"\t\t# \"Switch1\" base port 0 lid 2 "
      "lmc 0\n"
      "[1]\t\"H-0000000000100000\"[1](100001) \t\t# \"Hca1\" lid 1 4xSDR\n"
      "[2]\t\"H-0000000000100000\"[2](100002) \t\t# \"Hca1\" lid 4 4xSDR\n"
      "[3]\t\"S-0000000000200001\"[3]\t\t# \"Switch2\" lid 3 4xSDR\n"
      "[5]\t\"S-0000000000200001\"[5]\t\t# \"Switch2\" lid 3 4xSDR\n\n"
      "vendid=0x0\ndevid=0x0\nsysimgguid=0x100003\ncaguid=0x100003\n"
      "Ca\t2 \"H-0000000000100003\"\t\t# \"Hca2\"\n"
      "[1](100004) \t\"S-0000000000200001\"[1]\t\t# lid 5 lmc 0 \"Switch2\" "
      "lid 3 4xSDR\n"
      "[2](100005) \t\"S-0000000000200001\"[2]\t\t# lid 6 lmc 0 \"Switch2\" "
      "lid 3 4xSDR\n\n"
      "vendid=0x0\ndevid=0x0\nsysimgguid=0x100000\ncaguid=0x100000\n"
      "Ca\t2 \"H-0000000000100000\"\t\t# \"Hca1\"\n"
      "[1](100001) \t\"S-0000000000200000\"[1]\t\t# lid 1 lmc 0 \"Switch1\" "
      "lid 2 4xSDR\n"
      "[2](100002) \t\"S-0000000000200000\"[2]\t\t# lid 4 lmc 0 \"Switch1\" "
      "lid 2 4xSDR\n";
  absl::StatusOr<Fabric> fabric = ParseIbnetdiscover(dump, "sim.out");
  INFO(fabric.status().ToString());
  REQUIRE(fabric.ok());
  CHECK(fabric->nodes[2].guid == 0x100003);
  CHECK(fabric->nodes[2].ports[1].port_guid == 0x100005);
  CHECK(fabric->nodes[2].ports[1].width_speed == "4xSDR");
  const FabricTopology t =
      MustBuild(*fabric, {{"node-a", {0x100001}}, {"node-b", {0x100003}}});
  CHECK(t.topology.Describe() ==
        "topology: 2 switches, 1 levels, 2 nodes\n"
        "level 0 Switch1 peers=Switch2*2 nodes=node-a\n"
        "level 0 Switch2 peers=Switch1*2 nodes=node-b\n");
  CHECK(t.node_of_port_guid ==
        std::map<uint64_t, std::string>{{0x100001, "node-a"},
                                        {0x100002, "node-a"},
                                        {0x100004, "node-b"},
                                        {0x100005, "node-b"}});
  CHECK(t.unserved.empty());
  CHECK(t.unknown_agents.empty());
}

TEST_CASE("malformed dumps are refused with the file, line and reason") {
  const std::string sw = "Switch 4 \"S-1\"\n";
  struct Row {
    std::string text;
    const char* message;  // the start of the message
  };
  const std::vector<Row> rows = {
      {"hello world\n", "f.out:1: not ibnetdiscover output: \"hello world\""},
      {"[1] \"S-1\"[1]\n", "f.out:1: a port line outside a node"},
      {sw + "[1] \"H-1\"[1]\n\n[2] \"H-1\"[2]\n",
       "f.out:4: a port line outside a node"},
      {"Switch x \"S-1\"\n", "f.out:1: malformed node header"},
      {"Switch 4 S-1\n", "f.out:1: malformed node header"},
      {"Switch 0 \"S-1\"\n", "f.out:1: node S-1 claims 0 ports"},
      {sw + "[0] \"H-1\"[1]\n", "f.out:2: port 0 of S-1 (which has 4 ports)"},
      {sw + "[5] \"H-1\"[1]\n", "f.out:2: port 5 of S-1 (which has 4 ports)"},
      {sw + "[1] \"H-1\"[1]\n[1] \"H-2\"[1]\n",
       "f.out:3: port 1 of S-1 is listed twice (also on line 2)"},
      {sw + "\n" + sw,
       "f.out:3: node S-1 is described twice (first on line 1)"},
      {sw + "[1 \"H-1\"[1]\n",
       "f.out:2: malformed port line of S-1: expected [<port>]"},
      {sw + "[1] H-1[1]\n",
       "f.out:2: malformed port line of S-1: expected the \"<id>\""},
      {sw + "[1] \"H-1\"\n",
       "f.out:2: malformed port line of S-1: expected [<port>] after"},
      {sw + "[1](xyz) \"H-1\"[1]\n",
       "f.out:2: malformed port line of S-1: port GUID: not a GUID"},
      {"caguid=0xZZ\nCa 1 \"H-1\"\n", "f.out:1: caguid: not a GUID"},
      {sw + "[1] \"H-9\"[1]\n",
       "f.out:2: port 1 of S-1 is cabled to H-9, which the file does not "
       "describe (truncated output?)"},
      {sw + "[1] \"H-1\"[1]\n\nCa 1 \"H-1\"\n[1] \"S-2\"[1]\n\n" +
           "Switch 2 \"S-2\"\n[1] \"H-1\"[1]\n",
       "f.out:2: port 1 of S-1 is cabled to H-1 port 1, but line 5 cables "
       "that port to S-2 port 1"},
      {"caguid=0x5\nCa 1 \"H-1\"\n\ncaguid=0x5\nCa 1 \"H-2\"\n",
       "f.out:5: node GUID 0x0000000000000005 of H-2 is also the node GUID of "
       "the node on line 2"},
      {"Ca 1 \"H-1\"\n[1](7) \"H-2\"[1]\n\nCa 1 \"H-2\"\n[1](7) "
       "\"H-1\"[1]\n",
       "f.out:5: port GUID 0x0000000000000007 is also given on line 2"},
      {sw + "[1] \"H-1\"[3]\n\nCa 1 \"H-1\"\n",
       "f.out:2: port 1 of S-1 is cabled to port 3 of H-1, which has 1 ports"},
  };
  for (const Row& row : rows) {
    INFO(row.text);
    absl::StatusOr<Fabric> fabric = ParseIbnetdiscover(row.text, "f.out");
    REQUIRE_FALSE(fabric.ok());
    CHECK(fabric.status().code() == absl::StatusCode::kInvalidArgument);
    const std::string message(fabric.status().message());
    CHECK(message.substr(0, std::string(row.message).size()) == row.message);
  }
}

TEST_CASE("a truncated real dump is refused") {
  GANTRY_REQUIRE_SHARED_DATA(FabricDir());
  std::ifstream in(FabricDir() + kH100Dump);
  const std::string text((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
  const std::string cut = text.substr(0, text.size() / 2);
  absl::StatusOr<Fabric> fabric = ParseIbnetdiscover(cut, "cut.out");
  REQUIRE_FALSE(fabric.ok());
  CHECK(std::string(fabric.status().message()).find("truncated output?") !=
        std::string::npos);
}

TEST_CASE("GUIDs in their three spellings") {
  CHECK(*ParseGuid("0x248a070300a1b2c3") == 0x248a070300a1b2c3);
  CHECK(*ParseGuid("248A070300A1B2C3") == 0x248a070300a1b2c3);
  CHECK(*ParseGuid("248a:0703:00a1:b2c3") == 0x248a070300a1b2c3);
  CHECK(*ParseGuid("100004") == 0x100004);
  for (const char* bad : {"", "0x", "xyz", "0x248a070300a1b2c3ff", "12 34"}) {
    INFO(bad);
    CHECK(ParseGuid(bad).status().code() == absl::StatusCode::kInvalidArgument);
  }
  CHECK(FormatGuid(0x100004) == "0x0000000000100004");
  CHECK(FormatGuid(0xe09d7303007a4bd8) == "0xe09d7303007a4bd8");
}

TEST_CASE("host and switch names from node descriptions") {
  struct Row {
    const char* description;
    const char* host;
  };
  for (const Row& row : {
           Row{"a08-p1-dgx-04-c01 mlx5_5", "a08-p1-dgx-04-c01"},
           Row{"dgx-gb200-n01-c1 HCA-1", "dgx-gb200-n01-c1"},
           Row{"Hca1", "Hca1"},
           Row{"MT4129 ConnectX7   Mellanox Technologies", ""},
           Row{"Mellanox Technologies Aggregation Node", ""},
           Row{"MT4123", ""},
           Row{"", ""},
       }) {
    INFO(row.description);
    CHECK(HostFromNodeDescription(row.description) == row.host);
  }
  CHECK(SwitchNameFromNodeDescription("MF0;A09-P1-IBLEAF-04-04:MQM9701/U1") ==
        "A09-P1-IBLEAF-04-04");
  CHECK(SwitchNameFromNodeDescription("Switch1") == "Switch1");
  CHECK(SwitchNameFromNodeDescription("  ") == "");
}

TEST_CASE("switches with the same description keep their ids") {
  const std::string text =
      "Switch 2 \"S-a\" # \"MF0;spine:QM\"\n[1] \"S-b\"[1]\n\n"
      "Switch 2 \"S-b\" # \"MF0;spine:QM\"\n[1] \"S-a\"[1]\n[2] \"H-1\"[1]\n\n"
      "Ca 1 \"H-1\" # \"host1 mlx5_0\"\n[1] \"S-b\"[2]\n";
  absl::StatusOr<Fabric> fabric = ParseIbnetdiscover(text, "dup.out");
  REQUIRE(fabric.ok());
  const FabricTopology t = MustBuild(*fabric);
  CHECK(t.topology.LeafSwitchOf("host1") == "S-b");
  CHECK(t.topology.FindSwitch("S-a")->level == 1);
}

TEST_CASE("a missing ibnetdiscover file is NOT_FOUND") {
  CHECK(
      LoadIbnetdiscoverFile("/nonexistent/gantry/ibnet.out").status().code() ==
      absl::StatusCode::kNotFound);
}

}  // namespace ibnetdiscover_parser_test
}  // namespace gantry
