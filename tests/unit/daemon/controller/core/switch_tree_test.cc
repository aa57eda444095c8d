// The switch tree: only an admin imports one, a bad file leaves the tree in
// force, the imported text is stored and loads again, and the report says
// which nodes of the tree have no agent and which agents the tree misses.
#include "daemon/controller/core/switch_tree.h"

#include <optional>

#include <catch2/catch.hpp>

#include "tests/unit/support/core_parts_harness.h"

namespace gantry {
namespace switch_tree_test {

const Caller kAdmin{.uid = 0, .gid = 0, .user = "root", .admin = true};
const Caller kUser{.uid = 1000, .gid = 1000, .user = "alice"};

constexpr char kTwoLeaves[] =
    "SwitchName=leaf0 Nodes=n[1-2]\n"
    "SwitchName=leaf1 Nodes=n[3-4]\n"
    "SwitchName=spine Switches=leaf[0-1]\n";

v1::ImportTopologyRequest Request(const std::string& text) {
  v1::ImportTopologyRequest request;
  request.set_text(text);
  request.set_source("topology.conf");
  return request;
}

struct Harness {
  Harness() {
    core.AddNode("n1");
    core.AddNode("n2");
    core.AddNode("n3");
    core.AddNode("extra");
  }
  // Imports `text` as `caller` and runs the loop until it is answered.
  absl::StatusOr<v1::TopologyReport> Import(const std::string& text,
                                            const Caller& caller) {
    std::optional<absl::StatusOr<v1::TopologyReport>> answer;
    tree.Import(Request(text), caller,
                [&answer](absl::StatusOr<v1::TopologyReport> report) {
                  answer = std::move(report);
                });
    REQUIRE(core.PumpUntil([&answer] { return answer.has_value(); }));
    return *answer;
  }

  CoreParts core;
  SwitchTree tree{core.clock, core.options, core.state, core.commits};
};

TEST_CASE("An admin's topology.conf becomes the tree, matched to the nodes",
          "[switch_tree]") {
  Harness harness;
  absl::StatusOr<v1::TopologyReport> report =
      harness.Import(kTwoLeaves, kAdmin);
  INFO(report.status().ToString());
  REQUIRE(report.ok());
  CHECK(report->present());
  CHECK(report->format() == "slurm");
  CHECK(report->switches() == 3);
  CHECK(report->nodes() == 4);
  CHECK(std::vector<std::string>(report->unserved().begin(),
                                 report->unserved().end()) ==
        std::vector<std::string>{"n4"});
  CHECK(std::vector<std::string>(report->unknown_agents().begin(),
                                 report->unknown_agents().end()) ==
        std::vector<std::string>{"extra"});
  REQUIRE(harness.tree.topology() != nullptr);
  CHECK(harness.tree.LeafSwitchesOf("n3") == std::vector<std::string>{"leaf1"});
  CHECK(harness.tree.LeafSwitchesOf("extra").empty());
}

TEST_CASE("The imported text is stored and a later start loads it",
          "[switch_tree]") {
  Harness harness;
  REQUIRE(harness.Import(kTwoLeaves, kAdmin).ok());
  std::optional<v1::TopologyRecord> stored =
      harness.core.store.Load()->topology;
  REQUIRE(stored.has_value());
  CHECK(stored->text() == kTwoLeaves);
  CHECK(stored->imported_by() == "root");

  SwitchTree restarted(harness.core.clock, harness.core.options,
                       harness.core.state, harness.core.commits);
  CHECK(restarted.topology() == nullptr);
  CHECK_FALSE(restarted.Report().present());
  restarted.Load(stored);
  CHECK(restarted.Report().switches() == 3);
  CHECK(restarted.LeafSwitchesOf("n1") == std::vector<std::string>{"leaf0"});
}

TEST_CASE("A bad import changes nothing", "[switch_tree]") {
  Harness harness;
  REQUIRE(harness.Import(kTwoLeaves, kAdmin).ok());

  SECTION("not an admin") {
    absl::StatusOr<v1::TopologyReport> refused =
        harness.Import("SwitchName=s Nodes=n1\n", kUser);
    CHECK(refused.status().code() == absl::StatusCode::kPermissionDenied);
  }
  SECTION("neither format") {
    absl::StatusOr<v1::TopologyReport> refused =
        harness.Import("hello world\n", kAdmin);
    CHECK(refused.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(refused.status().message().find("--format") != std::string::npos);
  }
  SECTION("a keyword topology.conf does not have") {
    absl::StatusOr<v1::TopologyReport> refused =
        harness.Import("SwitchName=spine Bogus=1\n", kAdmin);
    CHECK(refused.status().code() == absl::StatusCode::kInvalidArgument);
  }
  CHECK(harness.tree.Report().switches() == 3);
  CHECK(harness.tree.LeafSwitchesOf("n1") == std::vector<std::string>{"leaf0"});
  CHECK(harness.core.store.Load()->topology->text() == kTwoLeaves);
}

}  // namespace switch_tree_test
}  // namespace gantry
