// libFuzzer target for the ibnetdiscover reader, which reads the output of a
// fabric walk (possibly cut short, or from a tool version with other
// formatting).
//
// Beyond "no crash": every error names the file and line; an accepted
// fabric builds a tree or is refused with a message; the port GUID map only
// names nodes of the tree; and agents reporting the port GUIDs of the
// tree's nodes are all found.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/ibnetdiscover_parser.h"
#include "common/topology.h"

namespace {

void Check(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "check failed: %s\n", what);
    std::abort();
  }
}

void CheckTree(const gantry::FabricTopology& t) {
  for (const auto& [guid, node] : t.node_of_port_guid) {
    Check(t.topology.HasNode(node), "GUID map names tree nodes");
  }
  for (const std::string& node : t.topology.nodes()) {
    Check(t.topology.LeafSwitchOf(node).has_value(), "node has a leaf");
  }
  (void)t.topology.Describe();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (size > 65536) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<gantry::Fabric> fabric =
      gantry::ParseIbnetdiscover(input, "fuzz.out");
  if (!fabric.ok()) {
    Check(std::string(fabric.status().message()).substr(0, 9) == "fuzz.out:",
          "error names the file and line");
    return 0;
  }
  absl::StatusOr<gantry::FabricTopology> t =
      gantry::BuildFabricTopology(*fabric, {});
  if (!t.ok()) {
    Check(!t.status().message().empty(), "error has a message");
    return 0;
  }
  CheckTree(*t);

  // One agent per node of the tree, reporting its adapters' port GUIDs:
  // each must be found.
  std::map<std::string, std::vector<uint64_t>> guids_of;
  for (const auto& [guid, node] : t->node_of_port_guid) {
    guids_of[node].push_back(guid);
  }
  std::vector<gantry::AgentHcas> agents;
  for (auto& [node, guids] : guids_of) {
    agents.push_back({"agent-" + node, std::move(guids)});
  }
  absl::StatusOr<gantry::FabricTopology> matched =
      gantry::BuildFabricTopology(*fabric, agents);
  if (!matched.ok()) return 0;  // e.g. a GUID shared by two adapters
  CheckTree(*matched);
  Check(matched->unknown_agents.empty(), "attached agents are known");
  return 0;
}
