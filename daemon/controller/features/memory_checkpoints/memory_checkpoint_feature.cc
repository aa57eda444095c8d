#include "daemon/controller/features/memory_checkpoints/memory_checkpoint_feature.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "daemon/launch/step_layout.h"

namespace gantry {

namespace {

// The ranks whose snapshots a step needs: the most tasks the job's attempt
// ran at once, its script's ranks or its largest srun step.
uint32_t MemoryCheckpointWorld(const v1::JobRecord& record) {
  uint32_t world = ScriptRankCount(record);
  for (const v1::StepRecord& step : record.steps()) {
    uint32_t tasks = 0;
    for (const v1::NodeAllocation& share : step.nodes()) {
      tasks += share.rank_count();
    }
    world = std::max(world, tasks);
  }
  return world;
}

// A --memory-checkpoints job that has not ended: its snapshots are kept.
bool LiveMemoryCheckpointJob(const v1::JobRecord* job) {
  return job != nullptr && job->spec().memory_checkpoints() &&
         (job->state() == v1::PENDING || job->state() == v1::RUNNING);
}

}  // namespace

MemoryCheckpointFeature::MemoryCheckpointFeature(FeatureContext& context)
    : context_(context) {}

MemoryCheckpointFeature::JobPlan& MemoryCheckpointFeature::PlanOf(
    uint64_t job_id) {
  JobPlan& plan = plans_[job_id];
  if (plan.token.empty()) plan.token = ledger_.NewToken();
  return plan;
}

bool MemoryCheckpointFeature::Apart(const std::string& a,
                                    const std::string& b) const {
  if (a == b) return false;
  const std::vector<std::string> leaves_a = context_.LeafSwitchesOf(a);
  const std::vector<std::string> leaves_b = context_.LeafSwitchesOf(b);
  // Without a switch tree each node is its own failure domain.
  if (leaves_a.empty() || leaves_b.empty()) return true;
  return std::none_of(
      leaves_a.begin(), leaves_a.end(), [&](const std::string& leaf) {
        return std::find(leaves_b.begin(), leaves_b.end(), leaf) !=
               leaves_b.end();
      });
}

bool MemoryCheckpointFeature::CanServe(const std::string& node) const {
  auto port = ports_.find(node);
  if (port == ports_.end() || port->second == 0) return false;
  const v1::NodeRecord* record = context_.FindNode(node);
  return record != nullptr && record->state() != v1::NODE_DOWN &&
         context_.NodeConnected(node);
}

void MemoryCheckpointFeature::OnNodeRegistered(
    const std::string& node, const v1::Register& registration) {
  ports_[node] = registration.memory_checkpoints().problem().empty()
                     ? registration.memory_checkpoint_port()
                     : 0;
  OnReport(node, registration.memory_checkpoints());
  // The plans of the jobs it takes part in (a new agent knows none, and a
  // restarted controller made new tokens).
  Replan(nullptr);
}

void MemoryCheckpointFeature::OnNodeDisconnected(const std::string& node) {
  // Its snapshot replicas are out of reach: the jobs it was a peer of
  // push to another node from now on.
  Replan(&node);
}

void MemoryCheckpointFeature::OnHeartbeat(const std::string& node,
                                          const v1::Heartbeat& heartbeat) {
  if (heartbeat.has_memory_checkpoints()) {
    OnReport(node, heartbeat.memory_checkpoints());
  }
}

void MemoryCheckpointFeature::OnAgentMessage(const std::string& /*node*/,
                                             const v1::AgentMessage& message) {
  if (!message.has_rank_event()) return;
  const v1::RankEvent& event = message.rank_event();
  if (event.kind() != v1::RankEvent::LAUNCH_FAILED ||
      !event.memory_restore_failed()) {
    return;
  }
  const v1::JobRecord* job = context_.FindJob(event.rank().job_id());
  if (job == nullptr || job->state() != v1::RUNNING ||
      job->attempt() != event.rank().attempt()) {
    return;
  }
  // The snapshot could not be fetched: the next attempt resumes from the
  // persistent checkpoint (the core ends this one, uncharged).
  PlanOf(job->id()).restore_failed = true;
}

void MemoryCheckpointFeature::OnReport(
    const std::string& node, const v1::MemoryCheckpointReport& report) {
  for (uint64_t job_id : ledger_.Report(node, report)) {
    const v1::JobRecord* job = context_.FindJob(job_id);
    if (!LiveMemoryCheckpointJob(job)) {
      // A job that ended (or that this controller never knew): what is
      // left of it in the node's memory goes.
      SendDrop(node, job_id);
      continue;
    }
    UpdateProtectedStep(*job);
  }
}

void MemoryCheckpointFeature::UpdateProtectedStep(const v1::JobRecord& job) {
  const std::optional<int64_t> step =
      ledger_.ProtectedStep(job.id(), MemoryCheckpointWorld(job),
                            [this](const std::string& a, const std::string& b) {
                              return Apart(a, b);
                            });
  if (!step.has_value()) return;
  if (job.has_memory_checkpoint() && job.memory_checkpoint().step() >= *step) {
    return;
  }
  const uint64_t id = job.id();
  const bool running = job.state() == v1::RUNNING;
  const int64_t now = context_.clock().NowMs();
  context_.UpdateJob(id, [&](v1::JobRecord& record) {
    v1::CheckpointInfo& info = *record.mutable_memory_checkpoint();
    info.set_step(*step);
    info.set_time_ms(now);
    info.set_source("memory");
    if (running) {
      record.set_progress_step(std::max(record.progress_step(), *step));
    }
  });
  // A restore that failed is behind: this newer step may be tried.
  if (auto plan = plans_.find(id); plan != plans_.end()) {
    plan->second.restore_failed = false;
  }
  if (running) context_.NoteJobProgress(id, /*checkpoint=*/true);
  context_.RecordEvent(
      id, "", "memory_checkpoint",
      absl::StrCat("step ", *step, " held in memory in two failure domains"));
  log::Debug("memory checkpoint protected", {{"job", id}, {"step", *step}});
}

void MemoryCheckpointFeature::OnJobStarted(const v1::JobRecord& job) {
  if (!job.spec().memory_checkpoints()) return;
  running_.insert(job.id());
  ChooseRestore(job);
  // Before the launch: the holders learn the token a restore presents.
  SendPlans(job);
}

void MemoryCheckpointFeature::ChooseRestore(const v1::JobRecord& job) {
  const uint64_t id = job.id();
  JobPlan& plan = PlanOf(id);
  plan.restore.reset();
  if (job.has_memory_restore_step()) {
    context_.UpdateJob(
        id, [](v1::JobRecord& record) { record.clear_memory_restore_step(); });
  }
  if (job.attempts_size() < 2 || plan.restore_failed) return;
  const v1::AttemptRecord& before = job.attempts(job.attempts_size() - 2);
  std::vector<std::string> old_nodes(before.nodes().begin(),
                                     before.nodes().end());
  std::vector<std::string> new_nodes;
  for (const v1::NodeAllocation& share : job.allocation()) {
    new_nodes.push_back(share.node());
  }
  std::optional<MemoryCheckpointLedger::Restore> restore =
      // The previous attempt's steps are still in the record here.
      ledger_.PlanRestore(
          id, MemoryCheckpointWorld(job), old_nodes, new_nodes,
          [this](const std::string& node) { return CanServe(node); });
  if (!restore.has_value()) {
    context_.RecordEvent(
        id, "", "memory_restore",
        absl::StrCat("attempt ", job.attempt(),
                     " cannot restore from memory checkpoints (no step "
                     "every rank holds on a reachable node, or another "
                     "node count); held: ",
                     ledger_.Describe(id)));
    return;
  }
  // The persistent checkpoint wins when it is as new (or, without steps,
  // written later).
  const v1::CheckpointInfo& persistent = job.latest_checkpoint();
  if (!persistent.path().empty()) {
    if (persistent.step() >= restore->step) return;
    if (persistent.step() < 0 &&
        persistent.time_ms() >= job.memory_checkpoint().time_ms()) {
      return;
    }
  }
  const int64_t step = restore->step;
  plan.restore = std::move(*restore);
  context_.UpdateJob(id, [step](v1::JobRecord& record) {
    record.set_memory_restore_step(step);
  });
  std::string where;
  for (const auto& [node, sources] : plan.restore->by_node) {
    for (const MemoryCheckpointLedger::RankSource& source : sources) {
      absl::StrAppend(&where, where.empty() ? "" : ", ", "rank ", source.rank,
                      " on ", node, " from ", source.holder);
    }
  }
  context_.RecordEvent(
      id, "", "memory_restore",
      absl::StrCat("attempt ", job.attempt(), " restores step ", step,
                   " from memory checkpoints: ", where));
}

void MemoryCheckpointFeature::Replan(const std::string* lost_peer) {
  for (auto it = running_.begin(); it != running_.end();) {
    const v1::JobRecord* job = context_.FindJob(*it);
    if (job == nullptr || job->state() != v1::RUNNING) {
      it = running_.erase(it);
      continue;
    }
    ++it;
    if (lost_peer != nullptr) {
      auto plan = plans_.find(job->id());
      if (plan == plans_.end() ||
          std::none_of(
              plan->second.peers.begin(), plan->second.peers.end(),
              [&](const auto& entry) { return entry.second == *lost_peer; })) {
        continue;
      }
    }
    SendPlans(*job);
  }
}

void MemoryCheckpointFeature::SendPlans(const v1::JobRecord& job) {
  if (!job.spec().memory_checkpoints() || job.state() != v1::RUNNING) return;
  JobPlan& plan = PlanOf(job.id());
  std::vector<std::string> job_nodes;
  for (const v1::NodeAllocation& share : job.allocation()) {
    job_nodes.push_back(share.node());
  }
  // In the nodes' name order, as the peers are chosen in a stable order.
  std::vector<std::string> candidates;
  for (const auto& [name, port] : ports_) {
    const v1::NodeRecord* node = context_.FindNode(name);
    if (port != 0 && node != nullptr && node->state() == v1::NODE_UP &&
        context_.NodeConnected(name)) {
      candidates.push_back(name);
    }
  }
  plan.peers = ChooseMemoryCheckpointPeers(
      job_nodes, candidates,
      [this](const std::string& a, const std::string& b) {
        return Apart(a, b);
      });
  std::set<std::string> involved = ledger_.HoldersOf(job.id());
  involved.insert(job_nodes.begin(), job_nodes.end());
  for (const auto& [node, peer] : plan.peers) involved.insert(peer);
  for (const std::string& name : involved) {
    v1::ControllerMessage message;
    v1::MemoryCheckpointPlan& sent = *message.mutable_memory_checkpoint_plan();
    sent.set_job_id(job.id());
    sent.set_token(plan.token);
    auto peer = plan.peers.find(name);
    if (peer != plan.peers.end()) {
      const v1::NodeRecord* to = context_.FindNode(peer->second);
      v1::MemoryCheckpointPeer& target = *sent.mutable_replicate_to();
      target.set_node(peer->second);
      if (to != nullptr) target.set_address(to->address());
      target.set_port(ports_.at(peer->second));
    }
    context_.SendToNode(name, message);
  }
}

void MemoryCheckpointFeature::OnJobFinished(const v1::JobRecord& job) {
  if (!job.spec().memory_checkpoints()) return;
  running_.erase(job.id());
  // Once its end is durable: a crash before must restart it with its
  // snapshots still held.
  context_.AfterCommit([this, id = job.id()] { Drop(id); });
}

void MemoryCheckpointFeature::Drop(uint64_t job_id) {
  std::set<std::string> holders = ledger_.HoldersOf(job_id);
  if (const v1::JobRecord* job = context_.FindJob(job_id)) {
    for (const v1::NodeAllocation& share : job->allocation()) {
      holders.insert(share.node());
    }
  }
  if (auto plan = plans_.find(job_id); plan != plans_.end()) {
    for (const auto& [node, peer] : plan->second.peers) holders.insert(peer);
    plans_.erase(plan);
  }
  for (const std::string& name : holders) SendDrop(name, job_id);
  ledger_.Forget(job_id);
}

void MemoryCheckpointFeature::SendDrop(const std::string& node,
                                       uint64_t job_id) {
  v1::ControllerMessage drop;
  drop.mutable_memory_checkpoint_drop()->set_job_id(job_id);
  context_.SendToNode(node, drop);
}

void MemoryCheckpointFeature::FillLaunch(const v1::JobRecord& job,
                                         const std::string& node,
                                         v1::LaunchRanks& launch) const {
  if (!job.spec().memory_checkpoints()) return;
  launch.set_memory_checkpoints(true);
  auto plan = plans_.find(job.id());
  if (plan == plans_.end() || !plan->second.restore.has_value()) return;
  const MemoryCheckpointLedger::Restore& planned = *plan->second.restore;
  auto mine = planned.by_node.find(node);
  if (mine == planned.by_node.end()) return;
  v1::MemoryRestore& restore = *launch.mutable_memory_restore();
  restore.set_step(planned.step);
  restore.set_token(plan->second.token);
  for (const MemoryCheckpointLedger::RankSource& source : mine->second) {
    v1::MemoryRestore::Source& entry = *restore.add_sources();
    entry.set_rank(source.rank);
    v1::MemoryCheckpointPeer& holder = *entry.mutable_holder();
    holder.set_node(source.holder);
    if (const v1::NodeRecord* at = context_.FindNode(source.holder)) {
      holder.set_address(at->address());
    }
    if (auto port = ports_.find(source.holder); port != ports_.end()) {
      holder.set_port(port->second);
    }
  }
}

std::unique_ptr<ControllerFeature> MakeMemoryCheckpointFeature(
    FeatureContext& context) {
  return std::make_unique<MemoryCheckpointFeature>(context);
}

}  // namespace gantry
