// The job lifecycle (job_lifecycle.h): the messages that start and stop
// ranks on agents: a job's launch (with its environment and per-rank
// variables), kills and signals, and sbatch --signal's warning before the
// time limit.
#include <boost/asio/post.hpp>

#include "absl/strings/str_cat.h"
#include "common/filename_pattern.h"
#include "common/log.h"
#include "daemon/controller/core/job_lifecycle.h"
#include "daemon/controller/core/staging_reason.h"
#include "daemon/launch/rank_environment.h"
#include "daemon/launch/step_layout.h"

namespace gantry {

namespace {

// Launch messages written per loop turn. Each is a write into the agent's
// stream on the loop's thread (with its environment of a few dozen
// variables per rank): a gang of a thousand nodes in one turn held the
// loop for a fifth of a second; in turns of this many, heartbeats and
// other requests are served in between, and the launch is no slower.
constexpr int kLaunchesPerTurn = 64;

// Where a job's submit environment is stored (StateStore::Environment):
// under an earlier job's id when it is the same (recent_environments.h),
// else under its own id, or its array's, which all the array's tasks share.
uint64_t EnvironmentId(const v1::JobRecord& record) {
  if (record.environment_id() != 0) return record.environment_id();
  return record.array_job_id() != 0 ? record.array_job_id() : record.id();
}

}  // namespace

void JobLifecycle::SendLaunch(uint64_t job_id, uint32_t attempt,
                              const std::string* only_node, int from_share) {
  auto it = parts_.state.jobs.find(job_id);
  if (it == parts_.state.jobs.end()) return;
  const v1::JobRecord& record = it->second.record;
  // Cancelled (or otherwise ended) before the launch went out.
  if (record.state() != v1::RUNNING || record.attempt() != attempt) return;
  // A feature may hold the launch back (the pre-flight's check goes
  // first; its verdict sends the launch, or not).
  for (const std::unique_ptr<ControllerFeature>& feature : parts_.features) {
    if (feature->HoldLaunch(record, /*whole=*/only_node == nullptr)) return;
  }
  // Records stored before JobEnvironment existed carry it inline.
  google::protobuf::Map<std::string, std::string> stored;
  const google::protobuf::Map<std::string, std::string>* environment =
      &record.spec().environment();
  if (environment->empty()) {
    absl::StatusOr<v1::JobEnvironment> loaded =
        parts_.store.Environment(EnvironmentId(record));
    if (!loaded.ok()) {
      // Running it without the environment it was submitted with would
      // be worse than not running it.
      log::Error("cannot read a job's environment; cancelling it",
                 {{"job", job_id}, {"error", loaded.status().ToString()}});
      (void)ApplyEvent(it->second, {JobEvent::Kind::kCancel},
                       absl::StrCat("its stored environment cannot be read: ",
                                    loaded.status().message()));
      return;
    }
    stored.swap(*loaded->mutable_variables());
    environment = &stored;
  }
  if (only_node == nullptr && from_share == 0) {
    // A new attempt stages afresh (its nodes report anew), and shows it
    // until they all have (features/datasets/).
    it->second.record.clear_dataset_staging();
    if (record.spec().datasets_size() > 0) {
      ShowStaging(it->second.record, true);
    }
  }
  const std::string& first_node = record.allocation(0).node();
  std::string master_addr = parts_.state.nodes.at(first_node).record.address();
  const JobWideEnvironment shared = JobWideEnvironmentOf(record);
  for (int i = from_share; i < record.allocation_size(); ++i) {
    if (only_node == nullptr && i - from_share == kLaunchesPerTurn) {
      // The rest in the next turn, which finds the job as it is then (a
      // cancel or a requeue meanwhile ends the launch there).
      boost::asio::post(parts_.io, [this, job_id, attempt, i] {
        SendLaunch(job_id, attempt, nullptr, i);
      });
      return;
    }
    const v1::NodeAllocation& share = record.allocation(i);
    // script_once: the script on the first node only; the other nodes
    // wait for its steps.
    const uint32_t script_ranks = ScriptRanksOn(record, i);
    if (script_ranks == 0) continue;
    if (only_node != nullptr && share.node() != *only_node) continue;
    NodeRuntime& node = parts_.state.nodes.at(share.node());
    if (!node.link) {
      // The node dropped between placement and launch; the deadline check
      // fails the job if it does not come back with these ranks.
      log::Warn("node unreachable at launch",
                {{"job", job_id}, {"node", share.node()}});
      continue;
    }
    v1::ControllerMessage message;
    v1::LaunchRanks& launch = *message.mutable_launch();
    launch.set_job_id(job_id);
    launch.set_attempt(attempt);
    launch.set_job_name(record.spec().name());
    launch.set_script(record.spec().script());
    *launch.mutable_script_args() = record.spec().script_args();
    launch.set_working_dir(record.spec().working_dir());
    // %N: the node these ranks run on (the batch script's is the first).
    launch.set_output_path(
        ExpandNodeInPath(record.output_path(), share.node()));
    // As sbatch: the first run's batch script starts the files afresh
    // (unless --open-mode=append), a restart appends. In --per-task mode
    // tasks on many nodes share the files, so they only ever append.
    launch.set_truncate_output(record.spec().script_once() &&
                               !record.spec().append_output() &&
                               record.attempts_size() <= 1);
    launch.set_error_path(ExpandNodeInPath(record.error_path(), share.node()));
    launch.set_uid(record.uid());
    launch.set_gid(record.gid());
    launch.set_user(record.user());
    // The node's share bounds the job's cgroup there.
    launch.set_cpus(share.cpus());
    launch.set_mem_mb(share.mem_mb());
    launch.set_checkpoint_dir(record.spec().checkpoint_dir());
    *launch.mutable_datasets() = record.spec().datasets();
    for (const std::unique_ptr<ControllerFeature>& feature : parts_.features) {
      feature->FillLaunch(record, share.node(), launch);
    }
    // Rank 0's node watches for framework checkpoint markers.
    launch.set_watch_checkpoints(i == 0 &&
                                 !record.spec().checkpoint_dir().empty());
    *launch.mutable_job_environment() = *environment;
    for (uint32_t local = 0; local < script_ranks; ++local) {
      v1::RankLaunch* rank = launch.add_ranks();
      rank->set_rank(share.first_rank() + local);
      *rank->mutable_gpu_indices() = share.gpu_indices();
      for (auto& [key, value] : BuildRankEnvironment(
               record, shared, master_addr, static_cast<uint32_t>(i), local)) {
        (*rank->mutable_environment())[key] = value;
      }
      (*rank->mutable_environment())["SLURM_CLUSTER_NAME"] =
          parts_.options.cluster_name;
    }
    node.link->Send(message);
  }
}

void JobLifecycle::SendKill(const JobRuntime& job, int signal, bool signal_only,
                            v1::KillRanks::Scope scope,
                            v1::KillRanks::Reason reason) {
  for (const auto& [node_name, live] : job.live_ranks) {
    if (live == 0) continue;
    auto it = parts_.state.nodes.find(node_name);
    if (it == parts_.state.nodes.end() || !it->second.link) continue;
    v1::ControllerMessage message;
    v1::KillRanks& kill = *message.mutable_kill();
    kill.set_job_id(job.record.id());
    kill.set_attempt(job.record.attempt());
    kill.set_signal(signal);
    kill.set_grace_seconds(parts_.options.kill_grace_seconds);
    kill.set_signal_only(signal_only);
    kill.set_scope(scope);
    kill.set_reason(reason);
    it->second.link->Send(message);
  }
}

void JobLifecycle::SendWarningSignal(JobRuntime& job, int64_t running_ms) {
  v1::JobRecord& record = job.record;
  const v1::JobSpec& spec = record.spec();
  const int64_t limit_ms =
      static_cast<int64_t>(spec.time_limit_seconds()) * 1000;
  if (limit_ms == 0 || record.warning_signal_attempt() == record.attempt()) {
    return;
  }
  const int64_t lead_ms =
      static_cast<int64_t>(spec.warning_signal_seconds()) * 1000;
  if (running_ms < limit_ms - lead_ms) return;
  // Slurm's targets: B: the batch script alone; otherwise the steps' tasks,
  // which in --per-task mode are the tasks themselves.
  const v1::KillRanks::Scope scope =
      spec.warning_signal_batch_only() ? v1::KillRanks::SCOPE_BATCH_SCRIPT
      : spec.script_once()             ? v1::KillRanks::SCOPE_STEP_TASKS
                                       : v1::KillRanks::SCOPE_ALL;
  SendKill(job, spec.warning_signal(), /*signal_only=*/true, scope);
  record.set_warning_signal_attempt(record.attempt());
  const std::string detail = absl::StrCat(
      "signal ", spec.warning_signal(), " sent to ",
      spec.warning_signal_batch_only() ? "the batch script" : "the tasks", ", ",
      spec.warning_signal_seconds(), " s before the time limit (--signal)");
  parts_.commits.StageEvent(record.id(), "", "signalled", detail);
  parts_.commits.StageJob(job.record);
  log::Info("warning signal sent", {{"job", record.id()},
                                    {"attempt", record.attempt()},
                                    {"signal", spec.warning_signal()}});
}

}  // namespace gantry
