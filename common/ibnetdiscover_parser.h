// Reads the output of `ibnetdiscover` (infiniband-diags) and ibsim net files,
// which use the same syntax, and turns the InfiniBand fabric it describes
// into a switch tree (topology.h) whose nodes are Gantry's hosts:
//
//   switchguid=0x2c5eab0300b87b40(2c5eab0300b87b40)
//   Switch 65 "S-2c5eab0300b87b40"  # "MF0;A09-P1-IBLEAF-04-04:MQM9701/U1"
//   [1] "H-e09d7303007a4bd8"[1](e09d7303007a4bd8)  # "dgx-04 mlx5_5" 4xNDR
//   [35] "S-2c5eab0300c26280"[32]  # "MF0;A10-P1-IBSPINE-02:MQM9701/U1"
//
//   caguid=0xe09d7303007a4bd8
//   Ca 1 "H-e09d7303007a4bd8"  # "dgx-04 mlx5_5"
//   [1](e09d7303007a4bd8) "S-2c5eab0300b87b40"[1]  # lid 647 lmc 0 ...
//
// Two steps: ParseIbnetdiscover reads the text into a Fabric (switches and
// channel adapters by GUID, their ports and cables), refusing malformed
// input with the file and line; BuildFabricTopology then matches the
// adapters to the agents (by the port GUIDs, then node GUIDs they report,
// else by the host name in the adapter's node description), builds the tree
// (leaf switches are those with hosts attached, spines are above), and reports
// hosts the fabric knows that no agent serves and agents the fabric does not
// know.
//
// Pure functions (apart from reading the file), thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/topology.h"

namespace gantry {

// "0x248a070300a1b2c3", "248a070300a1b2c3" or "248a:0703:00a1:b2c3" (the
// form ibv_devinfo and hwloc print) to a number.
// Errors: INVALID_ARGUMENT for anything else, or more than 64 bits.
absl::StatusOr<uint64_t> ParseGuid(std::string_view text);
// The form HcaPort.port_guid uses: "0x" and 16 lower-case hex digits.
std::string FormatGuid(uint64_t guid);

struct FabricPort {
  uint32_t port = 0;
  uint64_t port_guid = 0;  // from "[1](guid)" on CA ports; 0 when not given
  std::string remote_id;   // node id of the other end
  uint32_t remote_port = 0;
  std::string width_speed;  // "4xNDR" from the comment; "" when not printed
  int line = 0;
};

struct FabricNode {
  enum class Type { kSwitch, kCa, kRouter };
  Type type = Type::kCa;
  std::string id;  // the quoted id: "S-2c5e...", "H-e09d...", or an ibsim name
  uint64_t guid = 0;  // switchguid/caguid/rtguid, else hex in the id, else 0
  uint64_t system_image_guid = 0;  // sysimgguid; 0 when not given
  uint32_t port_count = 0;
  // The node description from the comment; the id when there is none (ibsim
  // net files name nodes by their description).
  std::string description;
  std::vector<FabricPort> ports;  // connected ports, in file order
  int line = 0;
};

struct Fabric {
  std::string source;
  std::vector<FabricNode> nodes;  // in file order
};

// Parses ibnetdiscover output (or an ibsim net file). `source` names the
// file in error messages.
// Errors (INVALID_ARGUMENT, "<source>:<line>: <reason>"): a line that is
// neither a comment, a key=value line, a node header nor a port line; a
// port line outside a node; a port number of 0, above the node's port count
// or given twice; a node id given twice; a bad GUID; a cable to a node the
// file does not describe (a truncated dump); a cable whose two ends
// disagree; a node GUID or an adapter port GUID given twice.
absl::StatusOr<Fabric> ParseIbnetdiscover(std::string_view text,
                                          const std::string& source);

// Reads and parses a file.
// Errors: NOT_FOUND for a missing file, INVALID_ARGUMENT when it cannot be
// read, and those of ParseIbnetdiscover.
absl::StatusOr<Fabric> LoadIbnetdiscoverFile(const std::string& path);

// The host name in a channel adapter's node description: its first word
// ("a08-p1-dgx-04-c01 mlx5_5" -> "a08-p1-dgx-04-c01"), or "" for the
// firmware's default descriptions ("MT4129 ConnectX7   Mellanox
// Technologies", "Mellanox Technologies Aggregation Node") that name no host.
std::string HostFromNodeDescription(std::string_view description);

// A switch's name from its node description: the part between "MF0;" and
// ":" ("MF0;A09-P1-IBLEAF-04-04:MQM9701/U1" -> "A09-P1-IBLEAF-04-04"), the
// whole description otherwise; "" for an empty one.
std::string SwitchNameFromNodeDescription(std::string_view description);

// One agent as the controller knows it: its node name and the GUIDs of its
// HCAs (port GUIDs, and node GUIDs where known).
struct AgentHcas {
  std::string node;
  std::vector<uint64_t> guids;
};

struct FabricTopology {
  // Switches are named from their descriptions (the id where that is empty
  // or not unique); nodes are agent names where matched, else the host name
  // of the description, else the adapter's id ("H-e09d730300858468").
  Topology topology;
  // Every host adapter port GUID in the tree -> its node name.
  std::map<uint64_t, std::string> node_of_port_guid;
  // Nodes of the tree no agent serves, in tree order.
  std::vector<std::string> unserved;
  // Agents whose GUIDs and name the fabric does not know, in input order.
  std::vector<std::string> unknown_agents;
  // Hosts whose adapters reach no switch (not in the tree).
  std::vector<std::string> detached;
  // Adapters inside switches (SHARP aggregation nodes), left out.
  size_t switch_adapters = 0;
};

// Builds the switch tree of `fabric` and matches it with `agents` (which
// may be empty). An adapter belongs to a switch, not a host, when its system
// image GUID is the switch's or its description says "Aggregation Node".
// Errors (INVALID_ARGUMENT, naming the source): a fabric without switches
// (the hosts found are listed); one agent GUID claimed by two agents.
absl::StatusOr<FabricTopology> BuildFabricTopology(
    const Fabric& fabric, const std::vector<AgentHcas>& agents);

}  // namespace gantry
