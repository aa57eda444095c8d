// Node administration (node_administration.h).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "daemon/controller/core/controller_metrics.h"
#include "daemon/controller/core/node_administration.h"

namespace gantry {

NodeAdministration::NodeAdministration(Parts parts) : parts_(parts) {}

void NodeAdministration::AssignPartitions(v1::NodeRecord& record) const {
  record.clear_partitions();
  for (const PartitionConfig& partition : parts_.options.partitions) {
    if (partition.Contains(record.name())) {
      record.add_partitions(partition.name);
    }
  }
  record.set_hot_spare(parts_.options.hot_spares.count(record.name()) > 0);
}

void NodeAdministration::DrainNode(NodeRuntime& node, const std::string& reason,
                                   const std::string& by) {
  node.record.set_drained(true);
  node.record.set_drain_reason(reason);
  node.record.set_drain_user(by);
  node.record.set_drain_time_ms(parts_.clock.NowMs());
  parts_.commits.StageNode(node.record);
  parts_.commits.StageEvent(0, node.record.name(), "node_drained", reason);
  log::Warn("node drained", {{"node", node.record.name()}, {"reason", reason}});
}

void NodeAdministration::Drain(const v1::DrainRequest& request,
                               const Caller& caller,
                               std::function<void(absl::Status)> done) {
  if (!caller.admin) {
    done(absl::PermissionDeniedError(absl::StrCat(
        "draining and resuming nodes needs an admin (root or the admin "
        "group); you are ",
        caller.user)));
    return;
  }
  if (!request.resume() && request.reason().empty()) {
    done(absl::InvalidArgumentError("a drain needs a reason (--reason)"));
    return;
  }
  for (const std::string& name : request.nodes()) {
    if (!parts_.state.nodes.count(name)) {
      done(absl::NotFoundError(absl::StrCat("unknown node ", name)));
      return;
    }
  }
  for (const std::string& name : request.nodes()) {
    NodeRuntime& node = parts_.state.nodes.at(name);
    if (request.resume()) {
      node.record.set_drained(false);
      node.record.clear_drain_reason();
      node.record.clear_drain_user();
      node.record.clear_drain_time_ms();
      parts_.commits.StageNode(node.record);
      parts_.commits.StageEvent(0, name, "node_resumed", "by " + caller.user);
      log::Info("node resumed", {{"node", name}});
    } else {
      DrainNode(node, request.reason(), caller.user);
    }
  }
  parts_.passes.Request();
  parts_.commits.AfterCommit(
      [done = std::move(done)] { done(absl::OkStatus()); });
}

void NodeAdministration::MarkNodeDown(NodeRuntime& node,
                                      const std::string& why) {
  const std::string name = node.record.name();
  log::Warn("node down", {{"node", name}, {"reason", why}});
  const bool was_up = node.record.state() == v1::NODE_UP;
  node.record.set_state(v1::NODE_DOWN);
  node.record.set_reason(why);
  bool had_work = false;
  const int64_t now = parts_.clock.NowMs();
  for (const auto& [id, job] : parts_.state.jobs) {
    if (parts_.lifecycle.JobNeedsNode(job, name)) had_work = true;
    // An attempt this node's loss ended moments ago counts too.
    const auto& attempts = job.record.attempts();
    if (!attempts.empty()) {
      const v1::AttemptRecord& last = attempts[attempts.size() - 1];
      if (last.node_fault() && last.end_time_ms() != 0 &&
          now - last.end_time_ms() <= parts_.options.node_timeout_ms + 5000 &&
          std::find(last.nodes().begin(), last.nodes().end(), name) !=
              last.nodes().end()) {
        had_work = true;
      }
    }
  }
  // Work a feature knows of (a failed attempt's other node, silent since
  // that fault and found dead now: it failed with the others). Every
  // feature is told.
  for (const std::unique_ptr<ControllerFeature>& feature : parts_.features) {
    if (feature->OnNodeDown(name, was_up)) had_work = true;
  }
  // A node that dies under a job is suspect until an admin looks at it.
  if (had_work) DrainNode(node, why);
  if (node.link) {
    parts_.state.link_nodes.erase(node.link.get());
    node.link->Close();
    node.link.reset();
  }
  parts_.commits.StageNode(node.record);
  parts_.commits.StageEvent(0, name, "node_down", why);
  for (auto& [id, job] : parts_.state.jobs) {
    if (!parts_.lifecycle.JobNeedsNode(job, name)) {
      if (job.occupied_nodes.count(name) && job.record.state() != v1::RUNNING) {
        parts_.lifecycle.ReleaseNodeShare(job, name);
      }
      continue;
    }
    // A feature may take the loss (the pre-flight judges its check now).
    const v1::JobRecord& record = job.record;
    if (std::any_of(parts_.features.begin(), parts_.features.end(),
                    [&](const std::unique_ptr<ControllerFeature>& feature) {
                      return feature->OnNodeLost(record, name);
                    })) {
      continue;
    }
    job.live_ranks[name] = 0;  // its ranks are lost with it
    // It failed when it was last heard from.
    parts_.lifecycle.FailJob(job, FailureKind::kNodeFault, 0, 0, false,
                             absl::StrCat("node ", name, " is down: ", why),
                             node.record.last_seen_ms());
    parts_.lifecycle.ReleaseNodeShare(job, name);
  }
}

}  // namespace gantry
