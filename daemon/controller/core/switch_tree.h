// The switch tree the scheduler places gangs by: imported by an admin from
// a Slurm topology.conf or an ibnetdiscover dump, stored as the text given
// (so a parser fix applies on the next start), and matched to the
// registered agents: by HCA GUIDs for a fabric dump, by node name for
// topology.conf. A bad file changes nothing: the tree in force stays.
//
// Threading: the controller's loop only.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/clock.h"
#include "common/ibnetdiscover_parser.h"
#include "common/topology.h"
#include "daemon/controller/core/caller.h"
#include "daemon/controller/core/cluster_state.h"
#include "daemon/controller/core/commit_pipeline.h"
#include "daemon/controller/core/controller_options.h"
#include "gantry/v1/client.pb.h"

namespace gantry {

class SwitchTree {
 public:
  // `state`: the nodes the tree is matched to. Every reference outlives
  // this.
  SwitchTree(const Clock& clock, const ControllerOptions& options,
             const ClusterState& state, CommitPipeline& commits);

  // At start, the stored tree (if any), matched to the nodes known then.
  void Load(std::optional<v1::TopologyRecord> record);
  // An agent registered: a fabric dump is matched again (its HCAs may be
  // new); a topology.conf names nodes and needs nothing.
  void OnAgentRegistered();
  // Admin only. Replaces the tree once the new one is stored; `done` gets
  // its report then.
  void Import(const v1::ImportTopologyRequest& request, const Caller& caller,
              std::function<void(absl::StatusOr<v1::TopologyReport>)> done);
  v1::TopologyReport Report() const;

  // The tree in force; null when none was imported.
  const Topology* topology() const {
    return loaded_ ? &loaded_->topology : nullptr;
  }
  // The leaf switches `node` hangs from; none without a tree.
  std::vector<std::string> LeafSwitchesOf(const std::string& node) const;

 private:
  struct LoadedTopology {
    Topology topology;
    std::vector<std::string> unserved;        // in the tree, no agent
    std::vector<std::string> unknown_agents;  // agents not in the tree
  };
  std::vector<AgentHcas> AgentGuids() const;
  absl::Status Build(const v1::TopologyRecord& record,
                     LoadedTopology& loaded) const;
  // Re-matches the tree to the agents.
  void Refresh();

  const Clock& clock_;
  const ControllerOptions& options_;
  const ClusterState& state_;
  CommitPipeline& commits_;
  std::optional<v1::TopologyRecord> record_;
  std::optional<LoadedTopology> loaded_;
};

}  // namespace gantry
