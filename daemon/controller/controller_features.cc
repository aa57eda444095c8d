// Controller: the features beside the core (controller_feature.h). The
// core calls their hooks where it changes a job (each staged job, the end of a
// job, retention), at start, on each tick, on heartbeats, progress reports
// and checkpoints, and for `gantry status` and `gantry job`; this file
// gives them their view of the controller and carries out what they ask.
#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "daemon/controller/controller.h"
#include "daemon/controller/core/scheduling_input.h"
#include "daemon/scheduler/fabric_parts.h"
#include "daemon/scheduler/scheduler.h"

namespace gantry {

class Controller::FeatureView : public FeatureContext {
 public:
  explicit FeatureView(Controller& controller) : controller_(controller) {}

  const Clock& clock() const override { return controller_.clock_; }
  ControllerMetrics* metrics() const override {
    return controller_.options_.metrics;
  }
  boost::asio::io_context& io() override { return controller_.io_; }
  void ForEachJob(
      const std::function<void(const v1::JobRecord&)>& visit) const override {
    for (const auto& [id, job] : controller_.core_.state.jobs)
      visit(job.record);
  }
  void ForEachLiveJob(
      const std::function<void(const v1::JobRecord&)>& visit) const override {
    for (const auto& [id, job] : controller_.core_.state.live_jobs)
      visit(job->record);
  }
  void ForEachNode(const std::function<void(const v1::NodeRecord&, bool,
                                            const v1::DatasetCacheReport&)>&
                       visit) const override {
    for (const auto& [name, node] : controller_.core_.state.nodes) {
      visit(node.record, node.link != nullptr, node.dataset_cache);
    }
  }
  const v1::JobRecord* FindJob(uint64_t job_id) const override {
    const JobRuntime* job = Job(job_id);
    return job == nullptr ? nullptr : &job->record;
  }
  bool JobOccupies(uint64_t job_id, const std::string& node) const override {
    const JobRuntime* job = Job(job_id);
    return job != nullptr && job->occupied_nodes.count(node) > 0;
  }
  size_t RestartableWithout(
      uint64_t job_id, const std::vector<std::string>& without) const override {
    const JobRuntime* job = Job(job_id);
    if (job == nullptr || without.empty()) return 0;
    const v1::JobRecord& record = job->record;
    std::vector<const std::string*> names;
    std::vector<NodeSnapshot> snapshot =
        controller_.core_.scheduling.NodeSnapshots(names);
    std::map<std::string_view, NodeSnapshot*> by_name;
    for (NodeSnapshot& node : snapshot) by_name.emplace(node.name, &node);
    // Once it restarts, what the job holds now is free again.
    for (const v1::NodeAllocation& held : record.allocation()) {
      auto found = by_name.find(held.node());
      if (found == by_name.end()) continue;
      NodeSnapshot& node = *found->second;
      node.cpus_free = std::min(node.cpus_total, node.cpus_free + held.cpus());
      node.mem_free_mb =
          std::min(node.mem_total_mb, node.mem_free_mb + held.mem_mb());
      for (uint32_t gpu : held.gpu_indices()) node.free_gpus.push_back(gpu);
      std::sort(node.free_gpus.begin(), node.free_gpus.end());
      node.free_gpus.erase(
          std::unique(node.free_gpus.begin(), node.free_gpus.end()),
          node.free_gpus.end());
    }
    // Every node left out (remembering whether it could take work).
    std::vector<std::pair<NodeSnapshot*, bool>> left_out;
    for (const std::string& name : without) {
      auto found = by_name.find(name);
      NodeSnapshot* node = found == by_name.end() ? nullptr : found->second;
      left_out.emplace_back(node, node != nullptr && node->schedulable);
      if (node != nullptr) node->schedulable = false;
    }
    // The scheduler's own test, with everything the job asks of its nodes
    // (node list, exclusions, features, GPU type, switch span, spares); the
    // last of the nodes is given back while it could not be placed.
    PendingJob pending = PendingJobOf(
        record,
        ParsedConstraintOf(record.spec().constraint(), job->constraint));
    pending.is_restart = true;
    SchedulerOptions options;
    options.backfill = false;
    options.now_ms = controller_.clock_.NowMs();
    options.unlisted_nodes = controller_.options_.unlisted_nodes;
    size_t restartable = left_out.size();
    while (restartable > 0 &&
           Schedule(snapshot, {pending}, {}, options).starts.empty()) {
      --restartable;
      auto [node, schedulable] = left_out[restartable];
      if (node != nullptr) node->schedulable = schedulable;
    }
    return restartable;
  }
  bool NodesFreeBeside(uint64_t job_id, uint32_t count) const override {
    JobRuntime* job = Job(job_id);
    if (job == nullptr) return false;
    const v1::JobRecord& record = job->record;
    std::vector<const std::string*> names;
    const std::vector<NodeSnapshot> snapshot =
        controller_.core_.scheduling.NodeSnapshots(names);
    // A job of `count` nodes that may not use the job's own (nor hot
    // spares, kept for failures), placed as the scheduler would.
    PendingJob probe = PendingJobOf(record, ParsedConstraint(*job));
    probe.nodes = count;
    probe.min_nodes = 0;
    probe.is_restart = false;
    probe.required_nodes.clear();
    for (const v1::NodeAllocation& share : record.allocation()) {
      probe.excluded_nodes.push_back(share.node());
    }
    // The nodes must join the job's own in one part of the fabric
    // (fabric_parts.h): a restart at full size could not use others, and
    // would come back at the same size.
    if (controller_.core_.switch_tree.topology() != nullptr &&
        !record.allocation().empty()) {
      const Topology& topology = *controller_.core_.switch_tree.topology();
      const std::string part =
          FabricPartName(topology, record.allocation(0).node());
      for (const auto& [name, node] : controller_.core_.state.nodes) {
        if (FabricPartName(topology, name) != part) {
          probe.excluded_nodes.push_back(name);
        }
      }
    }
    SchedulerOptions options;
    options.backfill = false;
    options.unlisted_nodes = controller_.options_.unlisted_nodes;
    return !Schedule(snapshot, {probe}, {}, options).starts.empty();
  }

  const v1::NodeRecord* FindNode(const std::string& name) const override {
    const NodeRuntime* node = Node(name);
    return node == nullptr ? nullptr : &node->record;
  }
  bool NodeConnected(const std::string& name) const override {
    const NodeRuntime* node = Node(name);
    return node != nullptr && node->link != nullptr;
  }
  uint64_t cluster_id() const override {
    return controller_.core_.state.cluster_id;
  }
  int64_t started_ms() const override { return controller_.started_ms_; }

  void SetJobReason(uint64_t job_id, const std::string& reason,
                    const std::string& detail) override {
    JobRuntime* job = Job(job_id);
    if (job == nullptr) return;
    job->record.set_reason(reason);
    if (detail.empty()) {
      job->record.clear_reason_detail();
    } else {
      job->record.set_reason_detail(detail);
    }
    controller_.core_.commits.StageJob(job->record);
  }
  void UpdateCurrentAttempt(
      uint64_t job_id,
      const std::function<void(v1::AttemptRecord&)>& edit) override {
    JobRuntime* job = Job(job_id);
    if (job == nullptr || job->record.attempts_size() == 0) return;
    edit(*job->record.mutable_attempts(job->record.attempts_size() - 1));
    controller_.core_.commits.StageJob(job->record);
  }
  void UpdateJob(uint64_t job_id,
                 const std::function<void(v1::JobRecord&)>& edit) override {
    JobRuntime* job = Job(job_id);
    if (job == nullptr) return;
    edit(job->record);
    controller_.core_.commits.StageJob(job->record);
  }
  void UpdateJobUnstaged(
      uint64_t job_id,
      const std::function<void(v1::JobRecord&)>& edit) override {
    JobRuntime* job = Job(job_id);
    if (job != nullptr) edit(job->record);
  }
  void AfterCommit(std::function<void()> action) override {
    controller_.core_.commits.AfterCommit(std::move(action));
  }
  std::vector<std::string> LeafSwitchesOf(
      const std::string& node) const override {
    return controller_.core_.switch_tree.LeafSwitchesOf(node);
  }
  bool SendToNode(const std::string& name,
                  const v1::ControllerMessage& message) override {
    NodeRuntime* node = Node(name);
    if (node == nullptr || !node->link) return false;
    node->link->Send(message);
    return true;
  }
  void ReleaseLaunch(uint64_t job_id) override {
    JobRuntime* job = Job(job_id);
    if (job == nullptr) return;
    v1::JobRecord& record = job->record;
    const int64_t now = controller_.clock_.NowMs();
    record.set_reason("None");
    record.clear_reason_detail();
    // The hang timeout counts from the ranks' start, not the hold's.
    record.set_last_progress_ms(now);
    job->quiet_for.Mark(now, controller_.clock_);
    controller_.core_.commits.StageJob(job->record);
    controller_.core_.commits.AfterCommit([&controller = controller_,
                                           id = record.id(),
                                           attempt = record.attempt()] {
      controller.core_.lifecycle.SendLaunch(id, attempt);
    });
  }
  void RequeueUnstarted(uint64_t job_id, const std::string& detail, bool hold,
                        const std::string& reason,
                        const std::string& reason_detail) override {
    JobRuntime* job = Job(job_id);
    if (job == nullptr) return;
    v1::JobRecord& record = job->record;
    // No rank started: nothing to charge and nothing to wait for.
    record.set_uncharged_attempts(record.uncharged_attempts() + 1);
    record.set_eligible_time_ms(controller_.clock_.NowMs());
    job->live_ranks.clear();
    JobEvent event{JobEvent::Kind::kPreflightFailed};
    event.requeue = true;
    (void)controller_.core_.lifecycle.ApplyEvent(*job, event, detail);
    if (hold) record.set_held(true);
    record.set_reason(reason);
    record.set_reason_detail(reason_detail);
    controller_.core_.commits.StageJob(job->record);
  }
  void RecordEvent(uint64_t job_id, const std::string& node,
                   const std::string& kind,
                   const std::string& detail) override {
    controller_.core_.commits.StageEvent(job_id, node, kind, detail);
  }
  void NoteJobProgress(uint64_t job_id, bool checkpoint) override {
    JobRuntime* job = Job(job_id);
    if (job == nullptr) return;
    job->record.set_last_progress_ms(controller_.clock_.NowMs());  // in memory
    job->quiet_for.Mark(job->record.last_progress_ms(), controller_.clock_);
    controller_.core_.lifecycle.NoteProgress(*job, checkpoint);
  }
  bool DrainNode(const std::string& name, const std::string& reason) override {
    NodeRuntime* node = Node(name);
    if (node == nullptr) return false;
    if (!node->record.drained())
      controller_.core_.nodes.DrainNode(*node, reason);
    return true;
  }
  absl::Status RestartUncharged(uint64_t job_id, const std::string& end_reason,
                                const std::string& detail) override {
    JobRuntime* job = Job(job_id);
    if (job == nullptr) {
      return absl::NotFoundError(absl::StrCat("no job ", job_id));
    }
    JobEvent event{JobEvent::Kind::kRequeueRequest};
    event.requeue = true;
    if (absl::Status status =
            controller_.core_.lifecycle.ApplyEvent(*job, event, detail);
        !status.ok()) {
      return status;
    }
    v1::JobRecord& record = job->record;
    record.set_uncharged_attempts(record.uncharged_attempts() + 1);
    if (!end_reason.empty() && record.attempts_size() > 0) {
      record.mutable_attempts(record.attempts_size() - 1)
          ->set_end_reason(end_reason);
    }
    controller_.core_.commits.StageJob(job->record);
    return absl::OkStatus();
  }

 private:
  void RequestSchedule() override { controller_.core_.passes.Request(); }
  void WakeAfter(ControllerFeature& feature, int64_t delay_ms) override {
    if (controller_.stopped_) return;
    std::unique_ptr<boost::asio::steady_timer>& wake =
        controller_.feature_wakes_[&feature];
    if (!wake)
      wake = std::make_unique<boost::asio::steady_timer>(controller_.io_);
    // Re-arming cancels the wait not yet due (it sees operation_aborted).
    wake->expires_after(std::chrono::milliseconds(delay_ms));
    wake->async_wait([this, &feature](const boost::system::error_code& error) {
      if (error || controller_.stopped_) return;
      feature.OnWake();
    });
  }

  // The controller's own entries; null when there is none.
  JobRuntime* Job(uint64_t job_id) const {
    auto it = controller_.core_.state.jobs.find(job_id);
    return it == controller_.core_.state.jobs.end() ? nullptr : &it->second;
  }
  NodeRuntime* Node(const std::string& name) const {
    auto it = controller_.core_.state.nodes.find(name);
    return it == controller_.core_.state.nodes.end() ? nullptr : &it->second;
  }

  Controller& controller_;
};

void Controller::MakeFeatures() {
  feature_view_ = std::make_unique<FeatureView>(*this);
  for (const FeatureFactory& make : options_.features) {
    features_.push_back(make(*feature_view_));
  }
}

}  // namespace gantry
