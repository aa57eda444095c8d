// Controller: in-memory checkpoints (--memory-checkpoints; docs/user-guide.md
// "In-memory checkpoints"). The agents keep each rank's snapshots in the
// node's memory and push them to a peer in another failure domain; the
// controller chooses the peers, learns from the agents' reports which
// steps are held where (memory_checkpoint_ledger.h), records the newest
// step safe from any one domain's loss as the job's memory checkpoint, and
// at a restart tells each new node which snapshots to fetch from where
// before its ranks start (GANTRY_RESTORE_STEP).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "daemon/controller/controller.h"
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

}  // namespace

bool Controller::ApartForMemoryCheckpoints(const std::string& a,
                                           const std::string& b) const {
  if (a == b) return false;
  const std::vector<std::string> leaves_a = LeafSwitchesOf(a);
  const std::vector<std::string> leaves_b = LeafSwitchesOf(b);
  // Without a switch tree each node is its own failure domain.
  if (leaves_a.empty() || leaves_b.empty()) return true;
  return std::none_of(
      leaves_a.begin(), leaves_a.end(), [&](const std::string& leaf) {
        return std::find(leaves_b.begin(), leaves_b.end(), leaf) !=
               leaves_b.end();
      });
}

void Controller::OnMemoryCheckpointReport(
    const std::string& node, const v1::MemoryCheckpointReport& report) {
  for (uint64_t job_id : memory_checkpoints_.Report(node, report)) {
    auto it = jobs_.find(job_id);
    const bool live = it != jobs_.end() &&
                      it->second.record.spec().memory_checkpoints() &&
                      !IsTerminal(FromProto(it->second.record.state()));
    if (!live) {
      // A job that ended (or that this controller never knew): what is
      // left of it in the node's memory goes.
      auto holder = nodes_.find(node);
      if (holder != nodes_.end() && holder->second.link) {
        v1::ControllerMessage drop;
        drop.mutable_memory_checkpoint_drop()->set_job_id(job_id);
        holder->second.link->Send(drop);
      }
      continue;
    }
    UpdateMemoryCheckpoint(it->second);
  }
}

void Controller::UpdateMemoryCheckpoint(JobRuntime& job) {
  v1::JobRecord& record = job.record;
  const std::optional<int64_t> step = memory_checkpoints_.ProtectedStep(
      record.id(), MemoryCheckpointWorld(record),
      [this](const std::string& a, const std::string& b) {
        return ApartForMemoryCheckpoints(a, b);
      });
  if (!step.has_value()) return;
  if (record.has_memory_checkpoint() &&
      record.memory_checkpoint().step() >= *step) {
    return;
  }
  v1::CheckpointInfo& info = *record.mutable_memory_checkpoint();
  info.set_step(*step);
  info.set_time_ms(clock_.NowMs());
  info.set_source("memory");
  // A restore that failed is behind: this newer step may be tried.
  job.memory_restore_failed = false;
  if (record.state() == v1::RUNNING) {
    record.set_last_progress_ms(info.time_ms());
    job.quiet_for.Mark(info.time_ms(), clock_);
    record.set_progress_step(std::max(record.progress_step(), *step));
    NoteProgress(job, /*checkpoint=*/true);
  }
  StageJob(job);
  StageEvent(
      record.id(), "", "memory_checkpoint",
      absl::StrCat("step ", *step, " held in memory in two failure domains"));
  log::Debug("memory checkpoint protected",
             {{"job", record.id()}, {"step", *step}});
}

void Controller::ChooseMemoryRestore(JobRuntime& job) {
  v1::JobRecord& record = job.record;
  record.clear_memory_restore_step();
  job.memory_restore.reset();
  if (!record.spec().memory_checkpoints() || record.attempts_size() < 2 ||
      job.memory_restore_failed) {
    return;
  }
  const v1::AttemptRecord& before = record.attempts(record.attempts_size() - 2);
  std::vector<std::string> old_nodes(before.nodes().begin(),
                                     before.nodes().end());
  std::vector<std::string> new_nodes;
  for (const v1::NodeAllocation& share : record.allocation()) {
    new_nodes.push_back(share.node());
  }
  std::optional<MemoryCheckpointLedger::Restore> restore =
      // The previous attempt's steps are still in the record here.
      memory_checkpoints_.PlanRestore(
          record.id(), MemoryCheckpointWorld(record), old_nodes, new_nodes,
          [this](const std::string& node) {
            auto it = nodes_.find(node);
            return it != nodes_.end() && it->second.link &&
                   it->second.memory_checkpoint_port != 0 &&
                   it->second.record.state() != v1::NODE_DOWN;
          });
  if (!restore.has_value()) {
    StageEvent(record.id(), "", "memory_restore",
               absl::StrCat("attempt ", record.attempt(),
                            " cannot restore from memory checkpoints (no step "
                            "every rank holds on a reachable node, or another "
                            "node count); held: ",
                            memory_checkpoints_.Describe(record.id())));
    return;
  }
  // The persistent checkpoint wins when it is as new (or, without steps,
  // written later).
  const v1::CheckpointInfo& persistent = record.latest_checkpoint();
  if (!persistent.path().empty()) {
    if (persistent.step() >= restore->step) return;
    if (persistent.step() < 0 &&
        persistent.time_ms() >= record.memory_checkpoint().time_ms()) {
      return;
    }
  }
  record.set_memory_restore_step(restore->step);
  job.memory_restore = std::move(*restore);
  if (job.memory_token.empty())
    job.memory_token = memory_checkpoints_.NewToken();
  std::string where;
  for (const auto& [node, sources] : job.memory_restore->by_node) {
    for (const MemoryCheckpointLedger::RankSource& source : sources) {
      absl::StrAppend(&where, where.empty() ? "" : ", ", "rank ", source.rank,
                      " on ", node, " from ", source.holder);
    }
  }
  StageEvent(record.id(), "", "memory_restore",
             absl::StrCat("attempt ", record.attempt(), " restores step ",
                          record.memory_restore_step(),
                          " from memory checkpoints: ", where));
}

void Controller::ReplanMemoryCheckpoints(const std::string* lost_peer) {
  // Every running job is in timed_jobs_; pending ones, which hold no plan,
  // are not walked (a registration must not cost the whole queue).
  for (auto& [id, job] : timed_jobs_) {
    if (!job->record.spec().memory_checkpoints() ||
        job->record.state() != v1::RUNNING) {
      continue;
    }
    if (lost_peer != nullptr &&
        std::none_of(
            job->memory_peers.begin(), job->memory_peers.end(),
            [&](const auto& entry) { return entry.second == *lost_peer; })) {
      continue;
    }
    SendMemoryCheckpointPlans(*job);
  }
}

void Controller::SendMemoryCheckpointPlans(JobRuntime& job) {
  const v1::JobRecord& record = job.record;
  if (!record.spec().memory_checkpoints() || record.state() != v1::RUNNING) {
    return;
  }
  // The token is a secret between the plan's nodes (a random 128 bits, as
  // pre-flight's).
  if (job.memory_token.empty())
    job.memory_token = memory_checkpoints_.NewToken();
  std::vector<std::string> job_nodes;
  for (const v1::NodeAllocation& share : record.allocation()) {
    job_nodes.push_back(share.node());
  }
  std::vector<std::string> candidates;
  for (const auto& [name, node] : nodes_) {
    if (node.link && node.memory_checkpoint_port != 0 &&
        node.record.state() == v1::NODE_UP) {
      candidates.push_back(name);
    }
  }
  job.memory_peers = ChooseMemoryCheckpointPeers(
      job_nodes, candidates,
      [this](const std::string& a, const std::string& b) {
        return ApartForMemoryCheckpoints(a, b);
      });
  std::set<std::string> involved = memory_checkpoints_.HoldersOf(record.id());
  for (const v1::NodeAllocation& share : record.allocation()) {
    involved.insert(share.node());
  }
  for (const auto& [node, peer] : job.memory_peers) involved.insert(peer);
  for (const std::string& name : involved) {
    auto node = nodes_.find(name);
    if (node == nodes_.end() || !node->second.link) continue;
    v1::ControllerMessage message;
    v1::MemoryCheckpointPlan& plan = *message.mutable_memory_checkpoint_plan();
    plan.set_job_id(record.id());
    plan.set_token(job.memory_token);
    auto peer = job.memory_peers.find(name);
    if (peer != job.memory_peers.end()) {
      const NodeRuntime& to = nodes_.at(peer->second);
      v1::MemoryCheckpointPeer& target = *plan.mutable_replicate_to();
      target.set_node(peer->second);
      target.set_address(to.record.address());
      target.set_port(to.memory_checkpoint_port);
    }
    node->second.link->Send(message);
  }
}

void Controller::DropMemoryCheckpoints(uint64_t job_id) {
  std::set<std::string> holders = memory_checkpoints_.HoldersOf(job_id);
  auto job = jobs_.find(job_id);
  if (job != jobs_.end()) {
    for (const v1::NodeAllocation& share : job->second.record.allocation()) {
      holders.insert(share.node());
    }
    for (const auto& [node, peer] : job->second.memory_peers) {
      holders.insert(peer);
    }
  }
  for (const std::string& name : holders) {
    auto node = nodes_.find(name);
    if (node == nodes_.end() || !node->second.link) continue;
    v1::ControllerMessage message;
    message.mutable_memory_checkpoint_drop()->set_job_id(job_id);
    node->second.link->Send(message);
  }
  memory_checkpoints_.Forget(job_id);
}

void Controller::AddMemoryCheckpointLaunch(const JobRuntime& job,
                                           const std::string& node,
                                           v1::LaunchRanks& launch) const {
  if (!job.record.spec().memory_checkpoints()) return;
  launch.set_memory_checkpoints(true);
  if (!job.memory_restore.has_value()) return;
  auto mine = job.memory_restore->by_node.find(node);
  if (mine == job.memory_restore->by_node.end()) return;
  v1::MemoryRestore& restore = *launch.mutable_memory_restore();
  restore.set_step(job.memory_restore->step);
  restore.set_token(job.memory_token);
  for (const MemoryCheckpointLedger::RankSource& source : mine->second) {
    v1::MemoryRestore::Source& entry = *restore.add_sources();
    entry.set_rank(source.rank);
    v1::MemoryCheckpointPeer& holder = *entry.mutable_holder();
    holder.set_node(source.holder);
    auto it = nodes_.find(source.holder);
    if (it != nodes_.end()) {
      holder.set_address(it->second.record.address());
      holder.set_port(it->second.memory_checkpoint_port);
    }
  }
}

}  // namespace gantry
