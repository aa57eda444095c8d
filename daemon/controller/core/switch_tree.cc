// The switch tree (switch_tree.h): imported, stored, matched to the agents
// and reported.
#include <algorithm>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/hostlist.h"
#include "common/ibnetdiscover_parser.h"
#include "common/log.h"
#include "common/slurm_topology_parser.h"
#include "daemon/controller/core/switch_tree.h"

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

SwitchTree::SwitchTree(const Clock& clock, const ControllerOptions& options,
                       const ClusterState& state, CommitPipeline& commits)
    : clock_(clock), options_(options), state_(state), commits_(commits) {}

void SwitchTree::Load(std::optional<v1::TopologyRecord> record) {
  record_ = std::move(record);
  Refresh();
}

void SwitchTree::OnAgentRegistered() {
  if (record_ && record_->format() == "ibnetdiscover") Refresh();
}

std::vector<AgentHcas> SwitchTree::AgentGuids() const {
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

absl::Status SwitchTree::Build(const v1::TopologyRecord& record,
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

void SwitchTree::Refresh() {
  if (!record_) return;
  LoadedTopology loaded;
  absl::Status status = Build(*record_, loaded);
  if (!status.ok()) {
    // It parsed when imported; keep what we have rather than lose the tree.
    log::Warn("cannot rebuild the topology; keeping the previous one",
              {{"error", status.ToString()}});
    return;
  }
  loaded_ = std::move(loaded);
}

void SwitchTree::Import(
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
  absl::Status status = Build(record, loaded);
  if (!status.ok()) {
    // The previous topology stays in force.
    done(status);
    return;
  }
  record_ = record;
  loaded_ = std::move(loaded);
  commits_.staged().topology = record;
  commits_.StageEvent(
      0, "", "topology_imported",
      absl::StrCat(record.format(), " from ", record.source(), ": ",
                   loaded_->topology.switches().size(), " switches, ",
                   loaded_->topology.nodes().size(), " nodes"));
  log::Info("topology imported",
            {{"format", record.format()},
             {"source", record.source()},
             {"switches", loaded_->topology.switches().size()},
             {"nodes", loaded_->topology.nodes().size()},
             {"unserved", loaded_->unserved.size()},
             {"unknown_agents", loaded_->unknown_agents.size()}});
  commits_.AfterCommit([this, done = std::move(done)] { done(Report()); });
}

v1::TopologyReport SwitchTree::Report() const {
  v1::TopologyReport report;
  if (!record_ || !loaded_) return report;
  report.set_present(true);
  report.set_format(record_->format());
  report.set_source(record_->source());
  report.set_imported_time_ms(record_->imported_time_ms());
  const Topology& tree = loaded_->topology;
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
  if (record_->format() == "slurm") {
    // Matched by name: compare with the agents registered now.
    for (const std::string& node : tree.nodes()) {
      if (!state_.nodes.count(node)) report.add_unserved(node);
    }
    for (const auto& [name, node] : state_.nodes) {
      if (!tree.HasNode(name)) report.add_unknown_agents(name);
    }
    return report;
  }
  for (const std::string& node : loaded_->unserved) report.add_unserved(node);
  for (const std::string& node : loaded_->unknown_agents) {
    report.add_unknown_agents(node);
  }
  return report;
}

std::vector<std::string> SwitchTree::LeafSwitchesOf(
    const std::string& node) const {
  if (!loaded_) return {};
  return loaded_->topology.LeafSwitchesOf(node);
}

}  // namespace gantry
