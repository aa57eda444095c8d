#include "cli/nodes_command.h"

#include <algorithm>
#include <iostream>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/command_support.h"
#include "cli/controller_client.h"
#include "cli/output_format.h"
#include "cli/printable_records.h"
#include "cli/slurm/sinfo_format.h"

namespace gantry::cli {

namespace {

// "4 (4 active, IB 400G)": the node's compute HCAs, from verbs ports when
// known; "-" for none.
std::string HcaSummary(const v1::NodeRecord& node) {
  int hcas = 0, active = 0;
  std::string link;
  for (const v1::NetworkDevice& device : node.inventory().network_devices()) {
    if (device.kind() != "openfabrics" || device.role() != "compute") continue;
    ++hcas;
    for (const v1::HcaPort& port : device.ports()) {
      if (port.state() == "ACTIVE") ++active;
      if (link.empty()) {
        link = absl::StrCat(port.link_layer() == "Ethernet" ? "RoCE" : "IB",
                            " ", port.rate_gbps(), "G");
      }
    }
  }
  if (hcas == 0) return "-";
  if (link.empty()) return absl::StrCat(hcas);
  return absl::StrCat(hcas, " (", active, " active, ", link, ")");
}

void PrintNodeDetail(const v1::NodeRecord& node) {
  const v1::NodeInventory& inventory = node.inventory();
  std::cout << "NodeName=" << node.name()
            << " State=" << NodeStateName(node.state())
            << (node.drained() ? "+drain" : "")
            << (node.hot_spare() ? "+spare" : "")
            << (node.simulated() ? "+sim" : "") << " Address=" << node.address()
            << "\n"
            << "   Reason="
            << (node.drained() ? node.drain_reason() : node.reason()) << "\n"
            << "   Health="
            << (node.health_problems_size() == 0
                    ? "ok"
                    : absl::StrJoin(node.health_problems(), "; "))
            << "\n"
            << "   Sockets=" << inventory.packages()
            << " Cores=" << inventory.cores() << " CPUs=" << inventory.cpus()
            << " NUMA=" << inventory.numa_nodes()
            << " RealMemory=" << inventory.memory_mb() << "\n"
            << "   CPUAlloc=" << node.cpus_allocated()
            << " GPUAlloc=" << node.gpus_allocated()
            << " MemAlloc=" << node.mem_allocated_mb() << "\n"
            << "   LeafSwitches="
            << (node.leaf_switches().empty()
                    ? "-"
                    : absl::StrJoin(node.leaf_switches(), ","))
            << " Inventory=" << inventory.source() << "\n"
            << "   AvailableFeatures="
            << (node.features().empty() ? "(null)"
                                        : absl::StrJoin(node.features(), ","))
            << "\n";
  std::vector<std::vector<std::string>> gpus = {
      {"GPU", "VENDOR", "MODEL", "PCI", "NUMA", "NEAREST_HCA", "VIA"}};
  for (const v1::GpuInfo& gpu : inventory.gpus()) {
    gpus.push_back({absl::StrCat(gpu.index()), gpu.vendor(), gpu.model(),
                    gpu.pci_bus_id(), absl::StrCat(gpu.numa_node()),
                    gpu.nearest_hca().empty() ? "-" : gpu.nearest_hca(),
                    gpu.hca_locality().empty() ? "-" : gpu.hca_locality()});
  }
  if (gpus.size() > 1) std::cout << RenderTable(gpus);
  std::vector<std::vector<std::string>> devices = {
      {"DEVICE", "KIND", "ROLE", "PCI", "NUMA", "GPUS", "PORTS"}};
  for (const v1::NetworkDevice& device : inventory.network_devices()) {
    std::vector<std::string> ports;
    for (const v1::HcaPort& port : device.ports()) {
      ports.push_back(absl::StrCat(port.port(), ":", port.state(), "/",
                                   port.link_layer(), "/", port.rate_gbps(),
                                   "G"));
    }
    std::vector<std::string> served;
    for (uint32_t gpu : device.gpus()) served.push_back(absl::StrCat(gpu));
    devices.push_back({device.name(), device.kind(),
                       device.role().empty() ? "-" : device.role(),
                       device.pci_bus_id().empty() ? "-" : device.pci_bus_id(),
                       absl::StrCat(device.numa_node()),
                       served.empty() ? "-" : absl::StrJoin(served, ","),
                       ports.empty() ? "-" : absl::StrJoin(ports, " ")});
  }
  if (devices.size() > 1) std::cout << RenderTable(devices);
}

}  // namespace

int RunNodesCommand(const std::string& controller,
                    const NodesOptions& options) {
  SinfoFilter filter;
  for (const std::string& partition : SplitLists(options.partitions))
    filter.partitions.insert(partition);
  for (const std::string& state : SplitLists(options.states)) {
    static const std::set<std::string> kKnown = {
        "idle", "mix", "alloc", "drain", "drng", "resv", "down"};
    std::string word = absl::AsciiStrToLower(state);
    if (word == "allocated") word = "alloc";
    if (word == "mixed") word = "mix";
    if (word == "draining") word = "drng";
    if (word == "drained") word = "drain";
    if (word == "reserved") word = "resv";
    if (!kKnown.count(word)) {
      std::cerr << "gantry nodes: error: invalid node state \"" << state
                << "\": use idle, mix, alloc, drain, drng, resv or down\n";
      return 1;
    }
    filter.states.insert(word);
  }
  ControllerClient client(ResolveControllerTarget(controller));
  v1::ListNodesResponse response;
  if (absl::Status status = client.ListNodes(response); !status.ok()) {
    return Fail("nodes", status);
  }
  MakePrintable(response,
                options.json ? OutputKind::kJson : OutputKind::kTerminal);
  if (!options.node.empty()) {
    for (const v1::NodeRecord& node : response.nodes()) {
      if (node.name() != options.node) continue;
      if (options.json) {
        std::cout << NodeToJson(node).dump(2) << "\n";
      } else {
        PrintNodeDetail(node);
      }
      return 0;
    }
    std::cerr << "gantry nodes: error: unknown node " << options.node
              << " (list them with gantry nodes -N)\n";
    return 1;
  }
  std::vector<v1::NodeRecord> nodes;
  for (const v1::NodeRecord& node : response.nodes()) {
    const bool in_partition =
        node.partitions().empty()
            ? filter.partitions.empty()
            : std::any_of(node.partitions().begin(), node.partitions().end(),
                          [&](const std::string& partition) {
                            return filter.Matches(node, partition);
                          });
    if (in_partition) nodes.push_back(node);
  }
  if (options.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const v1::NodeRecord& node : nodes) list.push_back(NodeToJson(node));
    nlohmann::json partitions = nlohmann::json::array();
    for (const v1::PartitionInfo& partition : response.partitions()) {
      partitions.push_back(
          {{"name", partition.name()},
           {"default", partition.is_default()},
           {"nodes", partition.nodes()},
           {"default_time_seconds", partition.default_time_seconds()},
           {"max_time_seconds", partition.max_time_seconds()},
           {"max_nodes", partition.max_nodes()}});
    }
    std::cout
        << nlohmann::json{{"nodes", list}, {"partitions", partitions}}.dump(2)
        << "\n";
    return 0;
  }
  if (options.detail) {
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (i > 0) std::cout << "\n";
      PrintNodeDetail(nodes[i]);
    }
    return 0;
  }
  // RenderTable sizes columns with the header; -h drops it afterwards.
  auto print = [&](const std::vector<std::vector<std::string>>& rows) {
    std::string table = RenderTable(rows);
    if (options.no_header) table.erase(0, table.find('\n') + 1);
    std::cout << table;
  };
  if (!options.format.empty()) {
    absl::StatusOr<SinfoFormat> format = SinfoFormat::Parse(options.format);
    if (!format.ok()) {
      std::cerr << "gantry nodes: error: " << format.status().message() << "\n";
      return 1;
    }
    if (!options.no_header) std::cout << format->Header();
    for (const std::string& line : format->Rows(
             nodes,
             {response.partitions().begin(), response.partitions().end()},
             filter, options.per_node)) {
      std::cout << line;
    }
    return 0;
  }
  if (!options.per_node) {
    print(SinfoSummary(
        nodes, {response.partitions().begin(), response.partitions().end()},
        filter));
    return 0;
  }
  std::vector<std::vector<std::string>> rows = {
      {"NODE", "STATE", "PARTITIONS", "CPUS(A/T)", "GPUS(A/T)", "MEMORY_MB",
       "HCAS", "LEAF", "ADDRESS", "REASON"}};
  for (const v1::NodeRecord& node : nodes) {
    std::string state = NodeStateName(node.state());
    if (node.health_problems_size() > 0) state += "+degraded";
    if (node.drained()) state += "+drain";
    if (node.hot_spare()) state += "+spare";
    if (node.simulated()) state += "+sim";
    std::string reason = node.drained() ? node.drain_reason() : node.reason();
    if (node.health_problems_size() > 0) {
      reason = absl::StrJoin(node.health_problems(), "; ");
    }
    rows.push_back(
        {node.name(), state, absl::StrJoin(node.partitions(), ","),
         absl::StrCat(node.cpus_allocated(), "/", node.inventory().cpus()),
         absl::StrCat(node.gpus_allocated(), "/", node.inventory().gpus_size()),
         absl::StrCat(node.inventory().memory_mb()), HcaSummary(node),
         node.leaf_switches().empty()
             ? "-"
             : absl::StrJoin(node.leaf_switches(), ","),
         node.address(), reason});
  }
  print(rows);
  return 0;
}

}  // namespace gantry::cli
