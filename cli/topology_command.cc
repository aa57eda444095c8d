#include "cli/topology_command.h"

#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/command_support.h"
#include "cli/controller_client.h"
#include "cli/output_format.h"
#include "cli/printable_records.h"
#include "common/hostlist.h"

namespace gantry::cli {

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
  MakePrintable(report, json ? OutputKind::kJson : OutputKind::kTerminal);
  if (json) {
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
                                     report.unknown_agents().end())}}
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
  std::cout << "In the fabric, no agent: "
            << (unserved.empty() ? "none" : CompressHostlist(unserved)) << "\n"
            << "Agents the fabric does not know: "
            << (unknown.empty() ? "none" : CompressHostlist(unknown)) << "\n";
  return 0;
}

}  // namespace gantry::cli
