#include "cli/commands/topology_command.h"

#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/client/command_support.h"
#include "cli/client/controller_client.h"
#include "cli/views/output_format.h"
#include "cli/views/printable_records.h"
#include "common/hostlist.h"
#include "common/terminal_text.h"

namespace gantry::cli {
namespace {

// What `gantry topology [import FILE]` parses into.
struct TopologyRequest {
  std::string file;    // import: the file; empty: show the tree
  std::string format;  // import: slurm or ibnetdiscover; empty: recognised
  bool json = false;
};

// What gantryd's --unlisted-nodes lets nodes outside the fabric take.
std::string UnlistedRule(const std::string& policy) {
  if (policy == "never") return "they take no jobs: --unlisted-nodes=never";
  if (policy == "single") {
    return "single-node jobs only, when no listed node fits: "
           "--unlisted-nodes=single";
  }
  return "jobs go there only when nothing on listed nodes fits, and never "
         "beside listed nodes: --unlisted-nodes=last";
}

// The connected parts: one line each when there are several, since jobs
// then never cross from one to another.
void PrintParts(const v1::TopologyReport& report) {
  const int count = report.parts_size();
  if (count <= 1) {
    std::cout << "Connected parts: " << count
              << (count == 1 ? " (every listed node reaches every other)" : "")
              << "\n";
    return;
  }
  std::cout << "Connected parts: " << count
            << " (no switch joins one to another; a job runs within one)\n";
  for (const v1::TopologyPart& part : report.parts()) {
    std::cout << "  " << part.name() << ": " << part.node_count() << " node(s) "
              << part.nodes();
    if (part.top_switches_size() > 1) {
      std::cout << " (top switches " << absl::StrJoin(part.top_switches(), ",")
                << ")";
    }
    std::cout << "\n";
  }
}

}  // namespace

int RunTopologyCommand(const std::string& controller, const std::string& file,
                       const std::string& format, bool json) {
  ControllerClient client(ResolveControllerTarget(controller));
  v1::TopologyReport report;
  absl::Status status;
  if (!file.empty()) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      std::cerr << "gantry topology: error: unable to open file " << file
                << "\n";
      return 1;
    }
    std::stringstream text;
    text << in.rdbuf();
    v1::ImportTopologyRequest request;
    request.set_text(text.str());
    request.set_format(format);
    request.set_source(file);
    request.set_user(CurrentUser());
    status = client.ImportTopology(request, report);
  } else {
    status = client.GetTopology(report);
  }
  if (!status.ok()) return Fail("topology", status);
  // The tree is one line per switch: each line is escaped for the terminal
  // (switch names come from files), the line breaks are kept.
  std::vector<std::string> tree_lines =
      absl::StrSplit(report.description(), '\n');
  for (std::string& line : tree_lines) line = EscapeForTerminal(line);
  MakePrintable(report, json ? OutputKind::kJson : OutputKind::kTerminal);
  if (!json) report.set_description(absl::StrJoin(tree_lines, "\n"));
  if (json) {
    nlohmann::json parts = nlohmann::json::array();
    for (const v1::TopologyPart& part : report.parts()) {
      parts.push_back({{"name", part.name()},
                       {"top_switches",
                        std::vector<std::string>(part.top_switches().begin(),
                                                 part.top_switches().end())},
                       {"nodes", part.nodes()},
                       {"node_count", part.node_count()}});
    }
    std::cout << nlohmann::json{{"present", report.present()},
                                {"format", report.format()},
                                {"source", report.source()},
                                {"imported_time",
                                 FormatTime(report.imported_time_ms())},
                                {"switches", report.switches()},
                                {"levels", report.levels()},
                                {"nodes", report.nodes()},
                                {"tree", report.description()},
                                {"unserved", std::vector<std::string>(
                                                 report.unserved().begin(),
                                                 report.unserved().end())},
                                {"unknown_agents",
                                 std::vector<std::string>(
                                     report.unknown_agents().begin(),
                                     report.unknown_agents().end())},
                                {"parts", parts},
                                {"unlisted_nodes", report.unlisted_nodes()}}
                     .dump(2)
              << "\n";
    return 0;
  }
  if (!report.present()) {
    std::cout << "No topology imported (gantry topology import FILE).\n";
    return 0;
  }
  if (!file.empty()) std::cout << "Imported " << file << ".\n";
  std::cout << "Topology from " << report.source() << " (" << report.format()
            << ", imported " << FormatTime(report.imported_time_ms()) << ")\n"
            << report.description();
  if (!report.description().empty() && report.description().back() != '\n') {
    std::cout << "\n";
  }
  std::vector<std::string> unserved(report.unserved().begin(),
                                    report.unserved().end());
  std::vector<std::string> unknown(report.unknown_agents().begin(),
                                   report.unknown_agents().end());
  PrintParts(report);
  std::cout << "In the fabric, no agent: "
            << (unserved.empty() ? "none" : CompressHostlist(unserved)) << "\n"
            << "Agents the fabric does not know: "
            << (unknown.empty() ? "none" : CompressHostlist(unknown));
  if (!unknown.empty()) {
    std::cout << " (" << UnlistedRule(report.unlisted_nodes()) << ")";
  }
  std::cout << "\n";
  return 0;
}

void AddTopologyCommand(CommandTable& commands) {
  CLI::App* topology = commands.app().add_subcommand(
      "topology",
      "Show the switch tree; admins import it with "
      "`gantry topology import FILE`");
  auto request = std::make_shared<TopologyRequest>();
  topology->add_flag("--json", request->json, "Machine-readable output");
  CLI::App* topology_import = topology->add_subcommand(
      "import",
      "Admin: load the switch tree from a Slurm topology.conf or "
      "ibnetdiscover output (a bad file changes nothing)");
  topology_import->add_option("FILE", request->file, "The file")->required();
  topology_import
      ->add_option("--format", request->format,
                   "slurm or ibnetdiscover (default: recognised)")
      ->check(CLI::IsMember({"slurm", "ibnetdiscover"}));
  topology_import->add_flag("--json", request->json, "Machine-readable output");
  // The import is part of the topology command: run as one.
  commands.Add(topology, [request](const std::string& controller) {
    return RunTopologyCommand(controller, request->file, request->format,
                              request->json);
  });
}

}  // namespace gantry::cli
