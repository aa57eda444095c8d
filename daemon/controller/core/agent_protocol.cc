// The agent protocol (agent_protocol.h).
#include <algorithm>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/crash_point.h"
#include "common/log.h"
#include "daemon/controller/core/agent_protocol.h"
#include "daemon/controller/core/request_validation.h"
#include "daemon/launch/step_layout.h"

namespace gantry {
namespace {

// In a RankId given to CheckRankHeld: any rank of the job on the node (a
// checkpoint report names the job, not a rank).
constexpr uint32_t kAnyRank = ~uint32_t{0};

std::string DescribeExit(const v1::RankEvent& event, const std::string& node) {
  if (event.kind() == v1::RankEvent::LAUNCH_FAILED) {
    return absl::StrCat("rank ", event.rank().rank(), " on ", node,
                        " could not start: ", event.message());
  }
  if (event.out_of_memory()) {
    return absl::StrCat("rank ", event.rank().rank(), " on ", node,
                        " ran out of memory: ", event.message());
  }
  if (event.signal() != 0) {
    return absl::StrCat("rank ", event.rank().rank(), " on ", node,
                        " was killed by signal ", event.signal());
  }
  return absl::StrCat("rank ", event.rank().rank(), " on ", node,
                      " exited with code ", event.exit_code());
}

}  // namespace

AgentProtocol::AgentProtocol(Parts parts) : parts_(parts) {}

void AgentProtocol::OnAgentMessage(const std::shared_ptr<AgentLink>& link,
                                   const v1::AgentMessage& message) {
  if (message.has_register_()) {
    OnRegister(link, message.register_());
    return;
  }
  auto known = parts_.state.link_nodes.find(link.get());
  if (known == parts_.state.link_nodes.end()) {
    // The stream's registration was refused, or a newer stream or a cut
    // replaced it (the reactor lets nothing else through unregistered).
    log::Debug("message from a closed agent stream", {{"peer", link->Peer()}});
    link->Close();
    return;
  }
  NodeRuntime& node = *known->second;
  const std::string& name = node.record.name();
  if (message.has_rank_event() || message.has_checkpoint()) {
    v1::RankId rank;
    if (message.has_rank_event()) {
      rank = message.rank_event().rank();
    } else {
      rank.set_job_id(message.checkpoint().job_id());
      rank.set_attempt(message.checkpoint().attempt());
      rank.set_rank(kAnyRank);
    }
    if (absl::Status held = CheckRankHeld(name, rank); !held.ok()) {
      CutAgent(link, name, held);
      return;
    }
  }
  node.deadline_ms = MonotonicMs(parts_.clock) + parts_.options.node_timeout_ms;
  node.record.set_last_seen_ms(parts_.clock.NowMs());
  for (const std::unique_ptr<ControllerFeature>& feature : parts_.features) {
    feature->OnHeardFrom(name);
  }
  if (message.has_heartbeat()) {
    OnHealth(node, message.heartbeat());
    if (message.heartbeat().has_dataset_cache()) {
      node.dataset_cache = message.heartbeat().dataset_cache();
    }
  }
  if (message.has_checkpoint()) {
    OnCheckpointReport(name, message.checkpoint());
  }
  for (const std::unique_ptr<ControllerFeature>& feature : parts_.features) {
    feature->OnAgentMessage(name, message);
  }
  if (message.has_rank_event()) {
    OnRankEvent(name, message.rank_event());
    uint64_t sequence = message.rank_event().sequence();
    parts_.commits.AfterCommit([link, sequence] {
      CrashPoint("gantryd.exit.after_commit_before_ack");
      v1::ControllerMessage ack;
      ack.mutable_ack()->set_up_to_sequence(sequence);
      link->Send(ack);
    });
  }
}

void AgentProtocol::OnRegister(const std::shared_ptr<AgentLink>& link,
                               const v1::Register& reg) {
  const std::string& name = reg.node_name();
  if (!ValidNodeName(name)) {  // the stream's guard let it through: a test
    log::Warn("refused registration: invalid node name",
              {{"peer", link->Peer()}, {"name", name}});
    link->Close();
    return;
  }
  NodeRuntime& node = parts_.state.nodes[name];
  const int64_t now = parts_.clock.NowMs();
  // The same agent redialling (its old stream may look alive after a
  // network blip) comes back from the same host and address.
  const bool same_agent = reg.boot_id() == node.record.boot_id() &&
                          reg.address() == node.record.address();
  if (node.link && node.link != link &&
      MonotonicMs(parts_.clock) <= node.deadline_ms && !same_agent) {
    // Another agent holds this name and is alive: the newcomer is a
    // misconfiguration (or an impostor), not a restart, which would have
    // broken the old stream. Refuse it rather than let the two take the
    // name from each other.
    log::Warn("refused registration: node name in use by a live agent",
              {{"node", name},
               {"peer", link->Peer()},
               {"holder", node.link->Peer()}});
    link->Close(absl::FailedPreconditionError(
        absl::StrCat("node name ", name, " is in use by a connected agent at ",
                     node.record.address())));
    return;
  }
  if (node.link && node.link != link) {
    log::Info("node re-registered; closing its older stream", {{"node", name}});
    parts_.state.link_nodes.erase(node.link.get());
    node.link->Close();
  }
  const bool rebooted =
      !node.record.boot_id().empty() && node.record.boot_id() != reg.boot_id();
  // What became of the node since it last registered decides whose fault
  // a rank it does not know is (ReconcileRanks).
  AgentContinuity continuity = AgentContinuity::kAgentRestarted;
  if (rebooted) {
    continuity = AgentContinuity::kNodeRebooted;
  } else if (!reg.agent_instance().empty() &&
             reg.agent_instance() == node.record.agent_instance()) {
    continuity = AgentContinuity::kSameAgent;
  }
  node.link = link;
  parts_.state.link_nodes[link.get()] = &node;
  node.deadline_ms = MonotonicMs(parts_.clock) + parts_.options.node_timeout_ms;
  v1::NodeRecord& record = node.record;
  record.set_name(name);
  record.set_address(reg.address());
  record.set_boot_id(reg.boot_id());
  record.set_agent_instance(reg.agent_instance());
  record.set_agent_version(reg.agent_version());
  record.set_simulated(reg.simulated());
  *record.mutable_features() = reg.features();
  *record.mutable_inventory() = reg.inventory();
  node.dataset_cache = reg.dataset_cache();
  record.set_state(v1::NODE_UP);
  record.clear_reason();
  record.set_registered_time_ms(now);
  record.set_last_seen_ms(now);
  parts_.nodes.AssignPartitions(record);
  if (record.partitions_size() == 0) {
    log::Warn("node is in no partition and will run no jobs", {{"node", name}});
  }
  parts_.commits.StageNode(node.record);
  CrashPoint("gantryd.register.before_commit");
  parts_.commits.StageEvent(
      0, name, "node_registered",
      absl::StrCat("address ", reg.address(), ", ", reg.inventory().cpus(),
                   " CPUs, ", reg.inventory().gpus_size(), " GPUs",
                   rebooted ? ", rebooted" : ""));
  log::Info("node registered", {{"node", name},
                                {"address", reg.address()},
                                {"peer", link->Peer()},
                                {"cpus", reg.inventory().cpus()},
                                {"gpus", reg.inventory().gpus_size()},
                                {"memory_mb", reg.inventory().memory_mb()},
                                {"running_ranks", reg.running_size()}});
  v1::ControllerMessage welcome;
  welcome.mutable_registered()->set_heartbeat_interval_ms(
      static_cast<uint32_t>(parts_.options.heartbeat_interval_ms));
  link->Send(welcome);
  for (const std::unique_ptr<ControllerFeature>& feature : parts_.features) {
    feature->OnNodeRegistered(name, reg);
  }
  ReconcileRanks(name, reg, continuity);
  // The fabric dump matches agents by their HCA GUIDs, known only now.
  parts_.switch_tree.OnAgentRegistered();
  parts_.passes.Request();
}

void AgentProtocol::ReconcileRanks(const std::string& node_name,
                                   const v1::Register& reg,
                                   AgentContinuity continuity) {
  // Exits that happened while we could not hear them.
  uint64_t last_sequence = 0;
  for (const v1::RankEvent& event : reg.unacknowledged_exits()) {
    last_sequence = std::max(last_sequence, event.sequence());
    // Not a reason to cut the stream: kept from before a restart, it may
    // predate this controller's state (a restored database).
    if (absl::Status held = CheckRankHeld(node_name, event.rank());
        !held.ok()) {
      log::Warn("ignored an exit the node reported at registration",
                {{"node", node_name}, {"reason", std::string(held.message())}});
      continue;
    }
    OnRankEvent(node_name, event);
  }
  if (last_sequence > 0) {
    std::shared_ptr<AgentLink> link = parts_.state.nodes.at(node_name).link;
    parts_.commits.AfterCommit([link, last_sequence] {
      v1::ControllerMessage ack;
      ack.mutable_ack()->set_up_to_sequence(last_sequence);
      link->Send(ack);
    });
  }
  // Ranks the agent still runs: keep those of current attempts, stop the rest.
  // (job, attempt, step, rank) the agent runs.
  std::set<std::tuple<uint64_t, uint32_t, uint32_t, uint32_t>> running;
  std::set<std::tuple<uint64_t, uint32_t, uint32_t>> to_kill;
  for (const v1::RankId& rank : reg.running()) {
    running.insert({rank.job_id(), rank.attempt(), rank.step(), rank.rank()});
    auto it = parts_.state.jobs.find(rank.job_id());
    if (it != parts_.state.jobs.end() && rank.step() == 0) {
      parts_.lifecycle.NoteRankStarted(it->second, rank.attempt(), rank.rank());
    }
    bool current = it != parts_.state.jobs.end() &&
                   it->second.record.state() == v1::RUNNING &&
                   it->second.record.attempt() == rank.attempt();
    if (current && rank.step() != 0) {
      current = false;
      for (const v1::StepRecord& step : it->second.record.steps()) {
        if (step.id() == rank.step() && step.end_time_ms() == 0) {
          current = true;
        }
      }
    }
    // A stale attempt: all of it; a stale step: that step only.
    if (!current) {
      to_kill.insert({rank.job_id(), rank.attempt(),
                      it != parts_.state.jobs.end() &&
                              it->second.record.attempt() == rank.attempt() &&
                              it->second.record.state() == v1::RUNNING
                          ? rank.step()
                          : 0});
    }
  }
  for (const auto& [job_id, attempt, step] : to_kill) {
    log::Warn("stopping ranks of a job that is not running here",
              {{"node", node_name},
               {"job", job_id},
               {"attempt", attempt},
               {"step", step}});
    v1::ControllerMessage message;
    message.mutable_kill()->set_job_id(job_id);
    message.mutable_kill()->set_attempt(attempt);
    message.mutable_kill()->set_step(step);
    message.mutable_kill()->set_signal(15);
    message.mutable_kill()->set_grace_seconds(
        parts_.options.kill_grace_seconds);
    parts_.state.nodes.at(node_name).link->Send(message);
  }
  // Ranks we believe run there but the agent neither runs nor saw exit.
  for (auto& [id, job] : parts_.state.jobs) {
    if (job.record.state() != v1::RUNNING) continue;
    // Step tasks the agent no longer has: ended unseen (killed with it).
    std::vector<v1::RankEvent> lost_tasks;
    for (const v1::StepRecord& step : job.record.steps()) {
      if (step.end_time_ms() != 0) continue;
      for (const v1::NodeAllocation& share : step.nodes()) {
        if (share.node() != node_name) continue;
        for (uint32_t t = share.first_rank();
             t < share.first_rank() + share.rank_count(); ++t) {
          bool exited = std::any_of(
              step.exits().begin(), step.exits().end(),
              [t](const v1::RankExit& exit) { return exit.rank() == t; });
          if (exited || running.count({id, step.attempt(), step.id(), t})) {
            continue;
          }
          v1::RankEvent event;
          event.set_kind(v1::RankEvent::EXITED);
          event.mutable_rank()->set_job_id(id);
          event.mutable_rank()->set_attempt(step.attempt());
          event.mutable_rank()->set_step(step.id());
          event.mutable_rank()->set_rank(t);
          event.set_signal(9);
          lost_tasks.push_back(std::move(event));
        }
      }
    }
    for (const v1::RankEvent& event : lost_tasks) {
      parts_.steps.OnTaskEvent(node_name, event);
    }
    for (int index = 0; index < job.record.allocation_size(); ++index) {
      const v1::NodeAllocation& share = job.record.allocation(index);
      if (share.node() != node_name) continue;
      std::vector<std::string> lost;
      for (uint32_t r = share.first_rank();
           r < share.first_rank() + ScriptRanksOn(job.record, index); ++r) {
        if (job.exited_ranks.count(r)) continue;
        if (running.count({id, job.record.attempt(), 0, r})) continue;
        lost.push_back(absl::StrCat(r));
      }
      if (lost.empty()) continue;
      OnLostRanks(job, node_name, absl::StrJoin(lost, ","), continuity);
    }
  }
}

void AgentProtocol::OnLostRanks(JobRuntime& job, const std::string& node_name,
                                const std::string& ranks,
                                AgentContinuity continuity) {
  const uint64_t id = job.record.id();
  switch (continuity) {
    case AgentContinuity::kSameAgent: {
      // The agent that was sent the launch would still hold its ranks or
      // their exits: it never got it (our crash between the durable start
      // and the send, or a stream that broke with the launch in it). The
      // loss is ours; the launch goes out again, for the same attempt.
      const std::string why =
          absl::StrCat("rank(s) ", ranks, " of job ", id, " never reached ",
                       node_name, "; launching them again");
      log::Warn("re-sending a launch the agent never received",
                {{"job", id},
                 {"attempt", job.record.attempt()},
                 {"node", node_name},
                 {"ranks", ranks}});
      parts_.commits.StageEvent(id, node_name, "launch_resent", why);
      parts_.commits.AfterCommit(
          [this, id, attempt = job.record.attempt(), node_name] {
            parts_.lifecycle.SendLaunch(id, attempt, &node_name);
          });
      return;
    }
    case AgentContinuity::kAgentRestarted: {
      // The agent process restarted and its ranks died with it: our own
      // crash on a node that did not fail. The attempt is over, the node
      // stays in service, the job's restart budget is untouched.
      job.live_ranks[node_name] = 0;
      const std::string why = absl::StrCat(
          "agent on ", node_name, " restarted and lost rank(s) ", ranks,
          " of job ", id, "; restarting the job (not charged)");
      parts_.lifecycle.FailJob(job, FailureKind::kOwnCrash, 0, 0, false, why);
      parts_.lifecycle.ReleaseFinished(job);
      return;
    }
    case AgentContinuity::kNodeRebooted: {
      job.live_ranks[node_name] = 0;
      const std::string why =
          absl::StrCat("node ", node_name, " rebooted and lost rank(s) ", ranks,
                       " of job ", id);
      parts_.nodes.DrainNode(parts_.state.nodes.at(node_name), why);
      parts_.lifecycle.FailJob(job, FailureKind::kNodeFault, 0, 0, false, why);
      parts_.lifecycle.ReleaseFinished(job);
      return;
    }
  }
}

void AgentProtocol::OnRankEvent(const std::string& node_name,
                                const v1::RankEvent& event) {
  if (event.kind() == v1::RankEvent::STARTED) {
    log::Debug("rank started", {{"job", event.rank().job_id()},
                                {"rank", event.rank().rank()},
                                {"node", node_name},
                                {"pid", event.pid()}});
    auto started = parts_.state.jobs.find(event.rank().job_id());
    if (started != parts_.state.jobs.end() && event.rank().step() == 0) {
      parts_.lifecycle.NoteRankStarted(started->second, event.rank().attempt(),
                                       event.rank().rank());
    }
    return;
  }
  if (event.rank().step() != 0) {
    parts_.steps.OnTaskEvent(node_name, event);
    return;
  }
  auto it = parts_.state.jobs.find(event.rank().job_id());
  if (it == parts_.state.jobs.end()) return;
  JobRuntime& job = it->second;
  v1::JobRecord& record = job.record;
  const uint32_t rank = event.rank().rank();
  if (event.rank().attempt() != record.attempt() ||
      job.exited_ranks.count(rank)) {
    return;  // a stale attempt, or a duplicate after reconnection
  }
  job.exited_ranks.insert(rank);
  uint32_t& live = job.live_ranks[node_name];
  if (live > 0) --live;
  v1::RankExit* exit = record.add_exits();
  exit->set_rank(rank);
  exit->set_exit_code(event.exit_code());
  exit->set_signal(event.signal());
  exit->set_node(node_name);
  if (record.state() != v1::RUNNING) {
    // A rank of an attempt that already ended (cancelled, failed, requeued)
    // has stopped: its share of the node may be free now.
    parts_.commits.StageJob(job.record);
    parts_.lifecycle.ReleaseFinishedOn(job, node_name);
    return;
  }
  const uint32_t world = ScriptRankCount(record);
  const bool all_exited = job.exited_ranks.size() >= world;
  const bool launch_failed = event.kind() == v1::RankEvent::LAUNCH_FAILED;
  const bool failed =
      launch_failed || event.exit_code() != 0 || event.signal() != 0;
  if (failed) {
    // A rank that fails while a peer's node is unreachable usually failed
    // because of it (its collective lost a partner): a node fault, not an
    // application error.
    for (const v1::NodeAllocation& share : record.allocation()) {
      auto peer = parts_.state.nodes.find(share.node());
      if (peer != parts_.state.nodes.end() && share.node() != node_name &&
          (peer->second.record.state() != v1::NODE_UP || !peer->second.link)) {
        parts_.lifecycle.FailJob(
            job, FailureKind::kNodeFault, 0, 0, all_exited,
            absl::StrCat(DescribeExit(event, node_name), " while node ",
                         share.node(), " was unreachable"),
            peer->second.record.last_seen_ms());
        return;
      }
    }
    if (launch_failed && event.memory_restore_failed()) {
      // The snapshot could not be fetched: the next attempt resumes from
      // the persistent checkpoint, and this one is not the job's to pay.
      parts_.lifecycle.FailJob(job, FailureKind::kOwnCrash, 0, 0, all_exited,
                               DescribeExit(event, node_name),
                               parts_.clock.NowMs());
      return;
    }
    if (launch_failed && event.node_fault()) {
      // The node's own failure (its dataset cache): restart elsewhere.
      parts_.lifecycle.FailJob(job, FailureKind::kNodeFault, 0, 0, all_exited,
                               DescribeExit(event, node_name),
                               parts_.clock.NowMs());
      return;
    }
    int exit_code =
        launch_failed && event.exit_code() == 0 ? 127 : event.exit_code();
    parts_.lifecycle.FailJob(job,
                             event.out_of_memory() ? FailureKind::kOutOfMemory
                                                   : FailureKind::kApplication,
                             exit_code, event.signal(), all_exited,
                             DescribeExit(event, node_name));
    return;
  }
  if (all_exited) {
    JobEvent done{JobEvent::Kind::kRankExited};
    done.all_ranks_exited = true;
    (void)parts_.lifecycle.ApplyEvent(
        job, done, absl::StrCat("all ", world, " rank(s) exited with code 0"));
    return;
  }
  parts_.commits.StageJob(job.record);
}

void AgentProtocol::OnCheckpointReport(const std::string& node_name,
                                       const v1::CheckpointReport& report) {
  auto it = parts_.state.jobs.find(report.job_id());
  if (it == parts_.state.jobs.end() ||
      it->second.record.attempt() != report.attempt()) {
    return;
  }
  log::Debug(
      "checkpoint marker",
      {{"job", report.job_id()}, {"node", node_name}, {"path", report.path()}});
  parts_.lifecycle.RecordCheckpoint(it->second, report.path(), report.step(),
                                    report.source());
}

void AgentProtocol::OnHealth(NodeRuntime& node,
                             const v1::Heartbeat& heartbeat) {
  RecordUsage(node.record.name(), heartbeat);
  for (const std::unique_ptr<ControllerFeature>& feature : parts_.features) {
    feature->OnHeartbeat(node.record.name(), heartbeat);
  }
  // Port attributes that changed (state, rate, LID) replace the ones the
  // agent registered with, so gantry nodes shows the ports as they are.
  for (const v1::NetworkDevice& update : heartbeat.port_updates()) {
    for (v1::NetworkDevice& device :
         *node.record.mutable_inventory()->mutable_network_devices()) {
      if (device.name() != update.name()) continue;
      for (const v1::HcaPort& changed : update.ports()) {
        bool found = false;
        for (v1::HcaPort& port : *device.mutable_ports()) {
          if (port.port() == changed.port()) {
            port = changed;
            found = true;
          }
        }
        if (!found) *device.add_ports() = changed;
      }
    }
  }
  if (heartbeat.port_updates_size() > 0) parts_.commits.StageNode(node.record);
  const auto& now_problems = heartbeat.health_problems();
  const auto& known = node.record.health_problems();
  if (now_problems.size() == known.size() &&
      std::equal(now_problems.begin(), now_problems.end(), known.begin())) {
    return;
  }
  const std::string name = node.record.name();
  *node.record.mutable_health_problems() = now_problems;
  parts_.commits.StageNode(node.record);
  if (now_problems.empty()) {
    parts_.commits.StageEvent(0, name, "node_healthy", "");
    log::Info("node healthy again", {{"node", name}});
    parts_.passes.Request();
    return;
  }
  const std::string why = absl::StrJoin(now_problems, "; ");
  parts_.commits.StageEvent(0, name, "node_degraded", why);
  log::Warn("node degraded", {{"node", name}, {"problems", why}});
  // Jobs on broken hardware are moved, and the node waits for an admin.
  bool had_work = false;
  for (auto& [id, job] : parts_.state.jobs) {
    if (job.record.state() != v1::RUNNING ||
        !parts_.lifecycle.JobNeedsNode(job, name)) {
      continue;
    }
    had_work = true;
    parts_.lifecycle.FailJob(
        job, FailureKind::kNodeFault, 0, 0, false,
        absl::StrCat("node ", name, " is degraded: ", why));
  }
  if (had_work) parts_.nodes.DrainNode(node, "degraded: " + why);
}

void AgentProtocol::OnAgentGone(const std::shared_ptr<AgentLink>& link,
                                const std::string& why) {
  auto known = parts_.state.link_nodes.find(link.get());
  if (known == parts_.state.link_nodes.end()) return;
  NodeRuntime& node = *known->second;
  parts_.state.link_nodes.erase(known);
  if (node.link != link) return;
  node.link.reset();
  ReclassifyRecentFailures(node.record.name());
  for (const std::unique_ptr<ControllerFeature>& feature : parts_.features) {
    feature->OnNodeDisconnected(node.record.name());
  }
  if (node.record.state() == v1::NODE_UP) {
    node.record.set_state(v1::NODE_UNREACHABLE);
    node.record.set_reason(why.empty() ? "agent stream closed"
                                       : "agent stream cut: " + why);
    parts_.commits.StageNode(node.record);
  }
  log::Warn("agent stream closed",
            {{"node", node.record.name()},
             {"deadline_in_ms", node.deadline_ms - MonotonicMs(parts_.clock)}});
}

void AgentProtocol::CutAgent(const std::shared_ptr<AgentLink>& link,
                             const std::string& node, const absl::Status& why) {
  log::Warn("agent stream cut", {{"node", node},
                                 {"peer", link->Peer()},
                                 {"reason", std::string(why.message())}});
  link->Close(why);
  OnAgentGone(link, std::string(why.message()));
}

absl::Status AgentProtocol::CheckRankHeld(const std::string& node,
                                          const v1::RankId& rank) const {
  auto it = parts_.state.jobs.find(rank.job_id());
  if (it == parts_.state.jobs.end()) return absl::OkStatus();
  const v1::JobRecord& record = it->second.record;
  if (rank.attempt() > record.attempt()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a report on attempt ", rank.attempt(), " of job ", rank.job_id(),
        ", which is at attempt ", record.attempt()));
  }
  if (rank.attempt() < record.attempt()) return absl::OkStatus();
  bool held = false;
  if (rank.step() == 0) {
    for (int i = 0; i < record.allocation_size() && !held; ++i) {
      const v1::NodeAllocation& share = record.allocation(i);
      held = share.node() == node &&
             (rank.rank() == kAnyRank ||
              (rank.rank() >= share.first_rank() &&
               rank.rank() < share.first_rank() + ScriptRanksOn(record, i)));
    }
  } else {
    const v1::StepRecord* step = nullptr;
    for (const v1::StepRecord& candidate : record.steps()) {
      if (candidate.id() == rank.step()) step = &candidate;
    }
    // Ended steps are pruned; an earlier attempt's are not judged.
    if (step == nullptr || step->attempt() != rank.attempt()) {
      return absl::OkStatus();
    }
    for (const v1::NodeAllocation& share : step->nodes()) {
      held =
          held || (share.node() == node && rank.rank() >= share.first_rank() &&
                   rank.rank() < share.first_rank() + share.rank_count());
    }
  }
  if (held) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "a report on ",
      rank.rank() == kAnyRank ? std::string("")
                              : absl::StrCat("rank ", rank.rank(), " of "),
      rank.step() == 0 ? std::string("")
                       : absl::StrCat("step ", rank.step(), " of "),
      "job ", rank.job_id(), " attempt ", rank.attempt(),
      ", which does not run on ", node));
}

void AgentProtocol::ReclassifyRecentFailures(const std::string& node_name) {
  // A rank on a healthy node can report its failure (a collective lost its
  // partner) a moment before the dead node's stream is seen to close. An
  // attempt that ended that way just now is the node's fault.
  constexpr int64_t kWindowMs = 3000;
  const int64_t now = parts_.clock.NowMs();
  for (auto& [id, job] : parts_.state.jobs) {
    v1::JobRecord& record = job.record;
    if (record.attempts_size() == 0) continue;
    v1::AttemptRecord& last =
        *record.mutable_attempts(record.attempts_size() - 1);
    if (last.node_fault() || last.end_time_ms() == 0 ||
        now - last.end_time_ms() > kWindowMs ||
        std::find(last.nodes().begin(), last.nodes().end(), node_name) ==
            last.nodes().end()) {
      continue;
    }
    if (last.end_reason() != "NonZeroExitCode" &&
        last.end_reason() != "Signal") {
      continue;
    }
    last.set_node_fault(true);
    last.set_end_reason("NodeFail");
    // The node's last message, not the rank's exit, is when it failed.
    if (auto node = parts_.state.nodes.find(node_name);
        node != parts_.state.nodes.end()) {
      const int64_t seen = node->second.record.last_seen_ms();
      if (seen >= last.start_time_ms() && seen < last.fault_time_ms()) {
        last.set_fault_time_ms(seen);
      }
    }
    last.set_end_detail(absl::StrCat(last.end_detail(), "; node ", node_name,
                                     " lost its agent at the same time"));
    record.set_repeated_app_failures(0);
    parts_.commits.StageJob(job.record);
    log::Info("failure attributed to a lost node",
              {{"job", id}, {"attempt", last.attempt()}, {"node", node_name}});
  }
}

void AgentProtocol::RecordUsage(const std::string& node,
                                const v1::Heartbeat& heartbeat) {
  for (const v1::JobUsageSample& sample : heartbeat.job_usage()) {
    auto it = parts_.state.jobs.find(sample.job_id());
    if (it == parts_.state.jobs.end()) continue;
    JobRuntime& job = it->second;
    if (job.record.state() != v1::RUNNING ||
        job.record.attempt() != sample.attempt() ||
        std::none_of(job.record.allocation().begin(),
                     job.record.allocation().end(),
                     [&](const v1::NodeAllocation& share) {
                       return share.node() == node;
                     })) {
      continue;
    }
    v1::JobUsageSample& kept = job.usage[node];
    kept = sample;
    kept.set_node(node);  // the stream's node, whatever the sample says
  }
}

}  // namespace gantry
