// Controller: the switch tree. Imported by an admin from a Slurm
// topology.conf or an ibnetdiscover dump, persisted as the text given (so a
// parser fix applies on the next start), and matched to the registered
// agents: by HCA GUIDs for a fabric dump, by node name for topology.conf.
#include <algorithm>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/hostlist.h"
#include "common/ibnetdiscover_parser.h"
#include "common/log.h"
#include "common/slurm_topology_parser.h"
#include "daemon/controller/controller.h"

namespace gantry {
namespace {

constexpr size_t kMaxTopologyBytes = 64 << 20;

std::string RecogniseFormat(const std::string& text) {
  std::string lower = absl::AsciiStrToLower(text.substr(0, 1 << 20));
  if (absl::StrContains(lower, "switchname=") ||
      absl::StrContains(lower, "blockname=")) {
    return "slurm";
  }
  if (absl::StrContains(lower, "switchguid=") ||
      absl::StrContains(text, "\nSwitch ") ||
      absl::StartsWith(text, "Switch ")) {
    return "ibnetdiscover";
  }
  return "";
}

}  // namespace

std::vector<AgentHcas> Controller::AgentGuids() const {
  std::vector<AgentHcas> agents;
  for (const auto& [name, node] : state_.nodes) {
    AgentHcas agent{name, {}};
    for (const v1::NetworkDevice& device :
         node.record.inventory().network_devices()) {
      for (const v1::HcaPort& port : device.ports()) {
        absl::StatusOr<uint64_t> guid = ParseGuid(port.port_guid());
        if (guid.ok() && *guid != 0) agent.guids.push_back(*guid);
      }
      absl::StatusOr<uint64_t> guid = ParseGuid(device.node_guid());
      if (!device.node_guid().empty() && guid.ok() && *guid != 0) {
        agent.guids.push_back(*guid);
      }
    }
    agents.push_back(std::move(agent));
  }
  return agents;
}

absl::Status Controller::BuildTopology(const v1::TopologyRecord& record,
                                       LoadedTopology& loaded) const {
  if (record.format() == "slurm") {
    absl::StatusOr<Topology> topology =
        ParseSlurmTopology(record.text(), record.source());
    if (!topology.ok()) return topology.status();
    loaded.topology = std::move(*topology);
    std::set<std::string> in_tree(loaded.topology.nodes().begin(),
                                  loaded.topology.nodes().end());
    for (const std::string& node : loaded.topology.nodes()) {
      if (!state_.nodes.count(node)) loaded.unserved.push_back(node);
    }
    for (const auto& [name, node] : state_.nodes) {
      if (!in_tree.count(name)) loaded.unknown_agents.push_back(name);
    }
    return absl::OkStatus();
  }
  if (record.format() == "ibnetdiscover") {
    absl::StatusOr<Fabric> fabric =
        ParseIbnetdiscover(record.text(), record.source());
    if (!fabric.ok()) return fabric.status();
    absl::StatusOr<FabricTopology> built =
        BuildFabricTopology(*fabric, AgentGuids());
    if (!built.ok()) return built.status();
    loaded.topology = std::move(built->topology);
    loaded.unserved = std::move(built->unserved);
    loaded.unknown_agents = std::move(built->unknown_agents);
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown topology format \"", record.format(),
                   "\" (expected slurm or ibnetdiscover)"));
}

void Controller::RefreshTopology() {
  if (!topology_record_) return;
  LoadedTopology loaded;
  absl::Status status = BuildTopology(*topology_record_, loaded);
  if (!status.ok()) {
    // It parsed when imported; keep what we have rather than lose the tree.
    log::Warn("cannot rebuild the topology; keeping the previous one",
              {{"error", status.ToString()}});
    return;
  }
  topology_ = std::move(loaded);
}

void Controller::ImportTopology(
    const v1::ImportTopologyRequest& request, const Caller& caller,
    std::function<void(absl::StatusOr<v1::TopologyReport>)> done) {
  if (!caller.admin) {
    done(absl::PermissionDeniedError(absl::StrCat(
        "importing a topology needs an admin (root or the admin group); "
        "you are ",
        caller.user)));
    return;
  }
  if (request.text().size() > kMaxTopologyBytes) {
    done(absl::InvalidArgumentError("the topology file is larger than 64 MiB"));
    return;
  }
  v1::TopologyRecord record;
  record.set_format(request.format().empty() ? RecogniseFormat(request.text())
                                             : request.format());
  if (record.format().empty()) {
    done(absl::InvalidArgumentError(absl::StrCat(
        request.source(),
        ": neither a Slurm topology.conf (SwitchName=...) nor ibnetdiscover "
        "output (switchguid=...); name the format with --format")));
    return;
  }
  record.set_source(request.source().empty() ? "topology" : request.source());
  record.set_text(request.text());
  record.set_imported_time_ms(clock_.NowMs());
  record.set_imported_by(caller.user);
  LoadedTopology loaded;
  absl::Status status = BuildTopology(record, loaded);
  if (!status.ok()) {
    // The previous topology stays in force.
    done(status);
    return;
  }
  topology_record_ = record;
  topology_ = std::move(loaded);
  commits_.staged().topology = record;
  commits_.StageEvent(
      0, "", "topology_imported",
      absl::StrCat(record.format(), " from ", record.source(), ": ",
                   topology_->topology.switches().size(), " switches, ",
                   topology_->topology.nodes().size(), " nodes"));
  log::Info("topology imported",
            {{"format", record.format()},
             {"source", record.source()},
             {"switches", topology_->topology.switches().size()},
             {"nodes", topology_->topology.nodes().size()},
             {"unserved", topology_->unserved.size()},
             {"unknown_agents", topology_->unknown_agents.size()}});
  commits_.AfterCommit(
      [this, done = std::move(done)] { done(TopologyReport()); });
}

v1::TopologyReport Controller::TopologyReport() const {
  v1::TopologyReport report;
  if (!topology_record_ || !topology_) return report;
  report.set_present(true);
  report.set_format(topology_record_->format());
  report.set_source(topology_record_->source());
  report.set_imported_time_ms(topology_record_->imported_time_ms());
  const Topology& tree = topology_->topology;
  report.set_description(tree.Describe());
  report.set_switches(static_cast<uint32_t>(tree.switches().size()));
  report.set_levels(static_cast<uint32_t>(tree.level_count()));
  report.set_nodes(static_cast<uint32_t>(tree.nodes().size()));
  for (const Topology::Part& part : tree.parts()) {
    if (part.nodes.empty()) continue;  // switches with no node matter not
    v1::TopologyPart* shown = report.add_parts();
    shown->set_name(part.name());
    for (const std::string& top : part.tops) shown->add_top_switches(top);
    shown->set_nodes(CompressHostlist(part.nodes));
    shown->set_node_count(static_cast<uint32_t>(part.nodes.size()));
  }
  report.set_unlisted_nodes(UnlistedNodesName(options_.unlisted_nodes));
  if (topology_record_->format() == "slurm") {
    // Matched by name: compare with the agents registered now.
    for (const std::string& node : tree.nodes()) {
      if (!state_.nodes.count(node)) report.add_unserved(node);
    }
    for (const auto& [name, node] : state_.nodes) {
      if (!tree.HasNode(name)) report.add_unknown_agents(name);
    }
    return report;
  }
  for (const std::string& node : topology_->unserved) report.add_unserved(node);
  for (const std::string& node : topology_->unknown_agents) {
    report.add_unknown_agents(node);
  }
  return report;
}

std::vector<std::string> Controller::LeafSwitchesOf(
    const std::string& node) const {
  if (!topology_) return {};
  return topology_->topology.LeafSwitchesOf(node);
}

}  // namespace gantry
