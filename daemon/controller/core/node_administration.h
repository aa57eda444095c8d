// Node administration: the partitions a node belongs to, drain and resume
// (an admin's, or a health check's), and a node going down: its jobs'
// attempts fail (unless a feature takes the loss), their shares there are
// freed, and a node that died under work stays drained for an admin.
//
// Threading: the controller's loop only.
#pragma once

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "common/clock.h"
#include "daemon/controller/core/caller.h"
#include "daemon/controller/core/cluster_state.h"
#include "daemon/controller/core/commit_pipeline.h"
#include "daemon/controller/core/controller_feature.h"
#include "daemon/controller/core/controller_options.h"
#include "daemon/controller/core/job_lifecycle.h"
#include "daemon/controller/core/pass_pacer.h"
#include "gantry/v1/client.pb.h"

namespace gantry {

class NodeAdministration {
 public:
  // What it works with; every reference outlives it.
  struct Parts {
    const Clock& clock;
    const ControllerOptions& options;
    ClusterState& state;
    CommitPipeline& commits;
    PassPacer& passes;
    JobLifecycle& lifecycle;
    const FeatureList& features;
  };
  explicit NodeAdministration(Parts parts);
  NodeAdministration(const NodeAdministration&) = delete;
  NodeAdministration& operator=(const NodeAdministration&) = delete;

  // Admin: drain nodes (or resume them); `done` once stored.
  void Drain(const v1::DrainRequest& request, const Caller& caller,
             std::function<void(absl::Status)> done);
  // Sets the node's partitions and hot-spare mark from the options.
  void AssignPartitions(v1::NodeRecord& record) const;
  // Takes the node out of scheduling (admin or health check) until resumed;
  // its running jobs go on. `by`: who drained it (sinfo -R's USER).
  void DrainNode(NodeRuntime& node, const std::string& reason,
                 const std::string& by = "gantryd");
  void MarkNodeDown(NodeRuntime& node, const std::string& why);

 private:
  Parts parts_;
};

}  // namespace gantry
