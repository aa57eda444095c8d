#include "cli/commands/nodes_command.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/client/command_support.h"
#include "cli/client/controller_client.h"
#include "cli/slurm/scontrol_records.h"
#include "cli/slurm/sinfo_format.h"
#include "cli/version.h"
#include "cli/views/output_format.h"
#include "cli/views/printable_records.h"
#include "common/hostlist.h"

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

// scontrol show node's record, then what Gantry knows beyond it.
void PrintNodeDetail(const v1::NodeRecord& node) {
  const v1::NodeInventory& inventory = node.inventory();
  std::cout << ScontrolNodeRecord(node) << "   Health="
            << (node.health_problems_size() == 0
                    ? "ok"
                    : absl::StrJoin(node.health_problems(), "; "))
            << (node.hot_spare() ? " HotSpare=yes" : "")
            << (node.simulated() ? " Simulated=yes" : "") << "\n"
            << "   Cores=" << inventory.cores()
            << " NUMA=" << inventory.numa_nodes()
            << " GPUAlloc=" << node.gpus_allocated() << "\n"
            << "   LeafSwitches="
            << (node.leaf_switches().empty()
                    ? "-"
                    : absl::StrJoin(node.leaf_switches(), ","))
            << " Inventory=" << inventory.source() << "\n";
  // Where each GPU sits (the scheduler packs a one-node job's GPUs under one
  // PCIe switch, then host bridge, NUMA node, package): the nearest switch.
  std::vector<std::vector<std::string>> gpus = {
      {"GPU", "VENDOR", "MODEL", "PCI", "NUMA", "SOCKET", "PCIE_SWITCH",
       "HOST_BRIDGE", "NEAREST_HCA", "VIA"}};
  for (const v1::GpuInfo& gpu : inventory.gpus()) {
    gpus.push_back({absl::StrCat(gpu.index()), gpu.vendor(), gpu.model(),
                    gpu.pci_bus_id(), absl::StrCat(gpu.numa_node()),
                    gpu.package() < 0 ? "-" : absl::StrCat(gpu.package()),
                    gpu.pcie_switches().empty() ? "-" : gpu.pcie_switches(0),
                    gpu.host_bridge().empty() ? "-" : gpu.host_bridge(),
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

// The layout the options ask for, with sinfo's precedence: -O, -o,
// SINFO_FORMAT, then the mode's own.
absl::StatusOr<SinfoFormat> ChooseNodesFormat(const NodesOptions& options) {
  if (!options.fields.empty()) return SinfoFormat::ParseFields(options.fields);
  std::string format = options.format;
  if (const char* variable = std::getenv("SINFO_FORMAT");
      format.empty() && variable != nullptr) {
    format = variable;
  }
  if (format.empty()) {
    format =
        options.list_reasons ? (options.long_format ? kSinfoReasonsLongFormat
                                                    : kSinfoReasonsFormat)
        : options.summarize  ? kSinfoSummarizeFormat
        : options.per_node
            ? (options.long_format ? kSinfoNodeLongFormat : kSinfoNodeFormat)
        : options.long_format ? kSinfoLongFormat
                              : kSinfoDefaultFormat;
  }
  std::vector<char> unknown;
  absl::StatusOr<SinfoFormat> parsed = SinfoFormat::Parse(format, &unknown);
  for (char letter : unknown) {
    // sinfo's words; the field is left out.
    std::cerr << "Invalid node format specification: " << letter << "\n";
  }
  return parsed;
}

// One listing; 0, or 1 after printing the error.
int ShowNodes(ControllerClient& client, const NodesOptions& options,
              const SinfoFilter& filter,
              const std::optional<SinfoFormat>& format) {
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
  if (format.has_value()) {
    if (!options.no_header &&
        (options.long_format || options.iterate_seconds > 0)) {
      std::cout << SlurmDateLine() << "\n";
    }
    std::cout << format->Table(
        nodes, {response.partitions().begin(), response.partitions().end()},
        filter, options.per_node, options.no_header);
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
  std::string table = RenderTable(rows);
  if (options.no_header) table.erase(0, table.find('\n') + 1);
  std::cout << table;
  return 0;
}

}  // namespace

int RunNodesCommand(const std::string& controller,
                    const NodesOptions& options) {
  SinfoFilter filter;
  for (const std::string& partition : SplitLists(options.partitions))
    filter.partitions.insert(partition);
  for (const std::string& state : SplitLists(options.states)) {
    static const std::set<std::string> kKnown = {
        "idle", "mix", "alloc", "drain", "drng", "resv", "down", "unk"};
    std::string word = absl::AsciiStrToLower(state);
    if (word == "allocated") word = "alloc";
    if (word == "mixed") word = "mix";
    if (word == "draining") word = "drng";
    if (word == "drained") word = "drain";
    if (word == "reserved") word = "resv";
    if (word == "unknown") word = "unk";
    // Slurm's other node states: no Gantry node is in one, so they select
    // nothing rather than being an error.
    static const std::set<std::string> kOther = {
        "cloud",        "comp",          "completing",
        "fail",         "failing",       "futr",
        "future",       "maint",         "no_respond",
        "npc",          "perfctrs",      "planned",
        "plnd",         "power_down",    "powering_down",
        "powered_down", "powering_up",   "pow_dn",
        "pow_up",       "reboot_issued", "reboot_requested"};
    if (kOther.count(word)) {
      filter.states.insert("(none)");
      continue;
    }
    if (word == "no_respond") {
      filter.dead_only = true;  // the nodes sinfo marks with "*"
      continue;
    }
    if (!kKnown.count(word)) {
      std::cerr << "gantry nodes: error: invalid node state \"" << state
                << "\": use idle, mix, alloc, drain, drng, resv, down or "
                   "unk\n";
      return 1;
    }
    filter.states.insert(word);
  }
  for (const std::string& expression : options.nodes) {
    absl::StatusOr<std::vector<std::string>> hosts = ExpandHostlist(expression);
    if (!hosts.ok()) {
      std::cerr << "gantry nodes: error: invalid node list \"" << expression
                << "\": " << hosts.status().message() << "\n";
      return 1;
    }
    filter.nodes.insert(hosts->begin(), hosts->end());
  }
  filter.with_reason = options.list_reasons;
  filter.responding_only = options.responding;
  filter.dead_only = options.dead;
  std::optional<SinfoFormat> format;
  // gantry nodes -N (not run as sinfo) keeps Gantry's inventory table.
  const bool inventory_table =
      options.per_node && !options.slurm_layout && options.format.empty() &&
      options.fields.empty() && !options.list_reasons && !options.summarize &&
      !options.long_format && std::getenv("SINFO_FORMAT") == nullptr;
  if (!inventory_table && options.node.empty() && !options.detail &&
      !options.json) {
    absl::StatusOr<SinfoFormat> chosen = ChooseNodesFormat(options);
    if (!chosen.ok()) return Fail("nodes", chosen.status());
    format = *std::move(chosen);
  }
  if (options.iterate_seconds < 0) {
    std::cerr << "gantry nodes: error: --iterate needs a positive number of "
                 "seconds\n";
    return 1;
  }
  ControllerClient client(ResolveControllerTarget(controller));
  while (true) {
    const int code = ShowNodes(client, options, filter, format);
    if (options.iterate_seconds == 0 || code != 0 || !format.has_value()) {
      return code;
    }
    std::cout << "\n" << std::flush;
    sleep(static_cast<unsigned>(options.iterate_seconds));
  }
}

void AddNodesCommand(CommandTable& commands) {
  CLI::App* nodes = commands.app().add_subcommand(
      "nodes", "Partitions and nodes by state (sinfo); -N: one line per node");
  nodes->set_help_flag("--help", "Print this help message and exit");
  auto options = std::make_shared<NodesOptions>();
  nodes->add_flag("--json", options->json, "Machine-readable output");
  nodes->add_option("NODE", options->node,
                    "Show one node's whole inventory (GPUs, HCAs and their "
                    "pairing), as scontrol show node");
  nodes->add_flag("-N,--Node", options->per_node,
                  "One line per node (sinfo -N)");
  nodes->add_flag("--detail", options->detail,
                  "Every node's whole record (scontrol show node)");
  nodes
      ->add_option("-p,--partition", options->partitions,
                   "Only these partitions (PART[,PART...])")
      ->allow_extra_args(false);
  nodes
      ->add_option("-t,--states", options->states,
                   "Only nodes in these states: idle, mix, alloc, drain, "
                   "drng, resv, down")
      ->allow_extra_args(false);
  nodes->add_flag("-h,--noheader", options->no_header,
                  "Leave out the header line");
  nodes
      ->add_option("-n,--nodes", options->nodes,
                   "Only these nodes (a hostlist: node[01-04])")
      ->allow_extra_args(false);
  nodes->add_flag("-R,--list-reasons", options->list_reasons,
                  "Why nodes are down, drained or draining: REASON USER "
                  "TIMESTAMP NODELIST");
  nodes->add_flag("-s,--summarize", options->summarize,
                  "One line per partition: NODES(A/I/O/T)");
  nodes->add_flag("-l,--long", options->long_format,
                  "Slurm's long layout, under a date line");
  nodes->add_option("-O,--Format", options->fields,
                    "sinfo's field names: NodeList,StateLong:.12,CPUsState,"
                    "... (name:WIDTH, name:.WIDTH; 20 columns by default)");
  nodes->add_option("-i,--iterate", options->iterate_seconds,
                    "Show again every SECONDS until interrupted");
  nodes->add_flag("-r,--responding", options->responding,
                  "Only nodes that respond");
  nodes->add_flag("-d,--dead", options->dead, "Only nodes that do not respond");
  nodes->add_flag("--slurm-layout", options->slurm_layout)
      ->group("");  // set when run as sinfo: -N in sinfo's columns
  nodes->add_option(
      "-o,--format", options->format,
      "sinfo's output format, e.g. \"%P %.6D %t %N\": %P partition, %R "
      "partition name, %a avail, %l time limit, %D nodes, %t/%T state, %N "
      "node list, %n host names, %o addresses, %c CPUs, %C CPUs "
      "A/I/O/T, %G GPUs, %m memory, %e free memory, %f features, %E reason, "
      "%O load; %.10X right-aligns in 10 columns");
  // sinfo -V: scripts probe with it.
  nodes->set_version_flag("-V,--version", kSlurmVersionLine);
  commands.Add(nodes, [options](const std::string& controller) {
    return RunNodesCommand(controller, *options);
  });
}

}  // namespace gantry::cli
