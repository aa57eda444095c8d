// Controller: node administration: partitions a node belongs to, drain and
// resume (an admin's, or a health check's), and a node going down.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "daemon/controller/controller.h"
#include "daemon/controller/controller_metrics.h"

namespace gantry {

void Controller::AssignPartitions(v1::NodeRecord& record) const {
  record.clear_partitions();
  for (const PartitionConfig& partition : options_.partitions) {
    if (partition.Contains(record.name())) {
      record.add_partitions(partition.name);
    }
  }
  record.set_hot_spare(options_.hot_spares.count(record.name()) > 0);
}

void Controller::DrainNode(NodeRuntime& node, const std::string& reason,
                           const std::string& by) {
  node.record.set_drained(true);
  node.record.set_drain_reason(reason);
  node.record.set_drain_user(by);
  node.record.set_drain_time_ms(clock_.NowMs());
  commits_.StageNode(node.record);
  commits_.StageEvent(0, node.record.name(), "node_drained", reason);
  log::Warn("node drained", {{"node", node.record.name()}, {"reason", reason}});
}

void Controller::Drain(const v1::DrainRequest& request, const Caller& caller,
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
    if (!state_.nodes.count(name)) {
      done(absl::NotFoundError(absl::StrCat("unknown node ", name)));
      return;
    }
  }
  for (const std::string& name : request.nodes()) {
    NodeRuntime& node = state_.nodes.at(name);
    if (request.resume()) {
      node.record.set_drained(false);
      node.record.clear_drain_reason();
      node.record.clear_drain_user();
      node.record.clear_drain_time_ms();
      commits_.StageNode(node.record);
      commits_.StageEvent(0, name, "node_resumed", "by " + caller.user);
      log::Info("node resumed", {{"node", name}});
    } else {
      DrainNode(node, request.reason(), caller.user);
    }
  }
  passes_.Request();
  commits_.AfterCommit([done = std::move(done)] { done(absl::OkStatus()); });
}

void Controller::MarkNodeDown(NodeRuntime& node, const std::string& why) {
  const std::string name = node.record.name();
  log::Warn("node down", {{"node", name}, {"reason", why}});
  const bool was_up = node.record.state() == v1::NODE_UP;
  node.record.set_state(v1::NODE_DOWN);
  node.record.set_reason(why);
  bool had_work = false;
  const int64_t now = clock_.NowMs();
  for (const auto& [id, job] : state_.jobs) {
    if (lifecycle_.JobNeedsNode(job, name)) had_work = true;
    // An attempt this node's loss ended moments ago counts too.
    const auto& attempts = job.record.attempts();
    if (!attempts.empty()) {
      const v1::AttemptRecord& last = attempts[attempts.size() - 1];
      if (last.node_fault() && last.end_time_ms() != 0 &&
          now - last.end_time_ms() <= options_.node_timeout_ms + 5000 &&
          std::find(last.nodes().begin(), last.nodes().end(), name) !=
              last.nodes().end()) {
        had_work = true;
      }
    }
  }
  // Work a feature knows of (a failed attempt's other node, silent since
  // that fault and found dead now: it failed with the others). Every
  // feature is told.
  for (const std::unique_ptr<ControllerFeature>& feature : features_) {
    if (feature->OnNodeDown(name, was_up)) had_work = true;
  }
  // A node that dies under a job is suspect until an admin looks at it.
  if (had_work) DrainNode(node, why);
  if (node.link) {
    state_.link_nodes.erase(node.link.get());
    node.link->Close();
    node.link.reset();
  }
  commits_.StageNode(node.record);
  commits_.StageEvent(0, name, "node_down", why);
  for (auto& [id, job] : state_.jobs) {
    if (!lifecycle_.JobNeedsNode(job, name)) {
      if (job.occupied_nodes.count(name) && job.record.state() != v1::RUNNING) {
        lifecycle_.ReleaseNodeShare(job, name);
      }
      continue;
    }
    // A feature may take the loss (the pre-flight judges its check now).
    const v1::JobRecord& record = job.record;
    if (AnyFeature([&](ControllerFeature& feature) {
          return feature.OnNodeLost(record, name);
        })) {
      continue;
    }
    job.live_ranks[name] = 0;  // its ranks are lost with it
    // It failed when it was last heard from.
    lifecycle_.FailJob(job, FailureKind::kNodeFault, 0, 0, false,
                       absl::StrCat("node ", name, " is down: ", why),
                       node.record.last_seen_ms());
    lifecycle_.ReleaseNodeShare(job, name);
  }
}

}  // namespace gantry
