#include "agent/agent.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "agent/agent_metrics.h"
#include "agent/datasets/dataset_cache_report.h"
#include "agent/datasets/dataset_stage_process.h"
#include "agent/discovery/node_inventory.h"
#include "agent/launch/gpu_environment.h"
#include "agent/launch/kill_notice.h"
#include "common/clock.h"
#include "common/crash_point.h"
#include "common/log.h"
#include "common/network_roles.h"
#include "common/tls_credentials.h"

namespace gantry::agent {
namespace {

std::string ReadBootId() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

double LoadAverage() {
  double load[1] = {0};
  return getloadavg(load, 1) == 1 ? load[0] : 0.0;
}

}  // namespace

Agent::Agent(AgentOptions options, v1::NodeInventory inventory)
    : options_(std::move(options)),
      inventory_(std::move(inventory)),
      identity_{.node_name = options_.node_name,
                .address = options_.address,
                .boot_id = ReadBootId(),
                .instance = NewAgentInstance(),
                .simulated = false,
                .features = options_.features} {
  RankLauncherOptions launcher_options;
  launcher_options.work_dir = options_.work_dir;
  launcher_options.node_name = options_.node_name;
  launcher_options.cgroups = JobCgroups::Open(options_.cgroups);
  launcher_ = std::make_unique<RankLauncher>(
      std::move(launcher_options),
      [this](const v1::RankId& rank, pid_t pid) { OnRankStarted(rank, pid); },
      [this](const v1::RankId& rank, const RankOutcome& outcome) {
        OnRankExited(rank, outcome);
      });
  int leftovers = launcher_->CleanUpLeftovers();
  if (leftovers > 0) {
    log::Warn(
        "stopped ranks left by an earlier agent process; the controller "
        "will see them as lost",
        {{"count", leftovers}});
  }
  std::unique_ptr<PortWatcher> ports;
  if (inventory_.source() == "this machine") {
    absl::StatusOr<std::unique_ptr<PortWatcher>> started = PortWatcher::Start();
    if (started.ok()) {
      ports = std::move(*started);
    } else {
      log::Warn("cannot watch HCA port events",
                {{"error", started.status().ToString()}});
    }
  }
  health_ = std::make_unique<HealthMonitor>(inventory_, options_.sysfs_root,
                                            std::move(ports));
  checkpoints_ = std::make_unique<CheckpointWatcher>(
      [this](const v1::CheckpointReport& report) {
        v1::AgentMessage message;
        *message.mutable_checkpoint() = report;
        // A report lost to a broken stream is sent again: the watcher
        // reports the marker anew after the next change, and the final read
        // when the ranks end.
        link_->Send(message);
      },
      options_.checkpoint_poll_ms);
  link_ = std::make_unique<ControllerLink>(
      options_.controller, [this] { return MakeRegister(); },
      [this](const v1::ControllerMessage& m) { OnControllerMessage(m); },
      [this] { OnConnected(); }, options_.munge_socket, options_.tls);
  preflight_ = std::make_unique<PreflightRunner>(
      options_.node_name, options_.address, options_.preflight_port,
      [this] { return health_->Check(); },
      [this](const v1::PreflightResult& result) {
        v1::AgentMessage message;
        *message.mutable_preflight_result() = result;
        // Lost with a broken stream: the controller's deadline for the
        // check then counts this node as not answering.
        link_->Send(message);
      });
  OpenMemoryCheckpoints();
  OpenDatasetCache();
}

void Agent::OpenMemoryCheckpoints() {
  const std::string root = options_.memory_checkpoint_dir.empty()
                               ? "/dev/shm/gantry/" + options_.node_name
                               : options_.memory_checkpoint_dir;
  const uint64_t limit = options_.memory_checkpoint_limit_bytes > 0
                             ? options_.memory_checkpoint_limit_bytes
                             : (inventory_.memory_mb() << 20) / 4;
  absl::StatusOr<std::unique_ptr<MemoryCheckpointStore>> store =
      MemoryCheckpointStore::Open(root, limit);
  if (!store.ok()) {
    memory_checkpoint_problem_ = std::string(store.status().message());
  } else if (preflight_->listener() == nullptr) {
    memory_checkpoint_problem_ =
        "no peer listener (the pre-flight listener could not bind)";
  }
  if (!memory_checkpoint_problem_.empty()) {
    log::Warn("in-memory checkpoints unusable on this node",
              {{"error", memory_checkpoint_problem_}});
    return;
  }
  memory_checkpoints_ = std::make_unique<MemoryCheckpointService>(
      std::move(*store), MemoryCheckpointServiceOptions{}, [this] {
        // What the node holds goes to the controller at once: it decides
        // what a restart can restore from.
        {
          MutexLock lock(mutex_);
          beat_now_ = true;
        }
        wake_.NotifyAll();
      });
  preflight_->listener()->AddProtocol(
      "GMC1",
      [service = memory_checkpoints_.get()](int fd, const std::string& line) {
        return service->Take(fd, line);
      });
}

void Agent::AddMemoryCheckpointDirectories(v1::LaunchRanks& launch) {
  if (!memory_checkpoints_) return;  // the ranks find no directory
  for (v1::RankLaunch& rank : *launch.mutable_ranks()) {
    absl::StatusOr<std::string> directory =
        memory_checkpoints_->PrepareRankDirectory(launch.job_id(), rank.rank(),
                                                  launch.uid(), launch.gid());
    if (!directory.ok()) {
      log::Warn("no in-memory checkpoint directory for a rank",
                {{"job", launch.job_id()},
                 {"rank", rank.rank()},
                 {"error", directory.status().ToString()}});
      continue;
    }
    (*rank.mutable_environment())["GANTRY_MEMORY_CHECKPOINT_DIR"] = *directory;
  }
}

bool Agent::RestoreMemoryCheckpoints(const v1::LaunchRanks& launch) {
  if (!launch.has_memory_restore()) return true;
  absl::Status restored =
      memory_checkpoints_
          ? memory_checkpoints_->Restore(launch)
          : absl::FailedPreconditionError(absl::StrCat(
                "in-memory checkpoints unusable on node ", options_.node_name,
                ": ", memory_checkpoint_problem_));
  if (restored.ok()) return true;
  FailLaunch(launch,
             absl::StrCat("in-memory checkpoint restore failed on node ",
                          options_.node_name, ": ", restored.message()),
             /*node_fault=*/false, /*memory_restore_failed=*/true);
  return false;
}

std::optional<v1::MemoryCheckpointReport> Agent::MemoryCheckpointReport(
    bool always) {
  if (memory_checkpoints_) return memory_checkpoints_->Report(always);
  if (!always) return std::nullopt;
  v1::MemoryCheckpointReport report;
  report.set_problem(memory_checkpoint_problem_);
  return report;
}

void Agent::OpenDatasetCache() {
  dataset_worker_ =
      std::make_unique<UserProcessDatasetWorker>(std::string(kOwnBinary));
  DatasetCacheOptions cache_options;
  cache_options.root = options_.cache_dir.empty()
                           ? options_.work_dir + "/datasets"
                           : options_.cache_dir;
  cache_options.capacity_bytes = options_.cache_size_bytes;
  cache_options.per_user_bytes = options_.cache_user_limit_bytes;
  std::string problem;
  absl::StatusOr<std::unique_ptr<DatasetCache>> cache =
      DatasetCache::Open(cache_options, *dataset_worker_, clock_);
  if (cache.ok()) {
    dataset_cache_ = std::move(*cache);
  } else {
    problem = std::string(cache.status().message());
    // Jobs without datasets run as ever; those with one fail here as the
    // node's fault and go elsewhere.
    log::Warn("dataset cache unusable", {{"error", problem}});
  }
  stager_ = std::make_unique<DatasetStager>(
      dataset_cache_.get(), problem, options_.node_name,
      [this](const v1::LaunchRanks& launch) {
        BeatIfCacheChanged();
        StartRanks(launch);
      },
      [this](const v1::LaunchRanks& launch, const std::string& message,
             bool node_fault) {
        BeatIfCacheChanged();
        FailLaunch(launch, message, node_fault);
      },
      [this](const v1::DatasetProgress& progress) {
        v1::AgentMessage message;
        *message.mutable_dataset_progress() = progress;
        // Lost with a broken stream: the next report, or the ranks'
        // start, tells the controller as much.
        link_->Send(message);
      },
      [this](const v1::LaunchRanks& launch) {
        return RestoreMemoryCheckpoints(launch);
      });
  cache_requests_ = std::make_unique<DatasetCacheRequests>(
      dataset_cache_.get(), problem,
      DatasetCacheRequestsOptions{.node_name = options_.node_name,
                                  .agent_is_root = ::geteuid() == 0,
                                  .agent_uid = ::geteuid(),
                                  .users = &SystemUserDatabase()},
      clock_, [this](const v1::DatasetCacheResult& result) {
        // The changed listing follows at once in a heartbeat.
        BeatIfCacheChanged();
        v1::AgentMessage message;
        *message.mutable_dataset_cache_result() = result;
        // Lost with a broken stream: the controller fails the request
        // when the stream ends (DatasetRequests::NodeGone).
        link_->Send(message);
      });
}

void Agent::StartRanks(const v1::LaunchRanks& launch) {
  launcher_->Launch(launch);
  if (launch.step() == 0) CrashPoint("agent.launch.after_start");
}

void Agent::FailLaunch(const v1::LaunchRanks& launch,
                       const std::string& message, bool node_fault,
                       bool memory_restore_failed) {
  log::Warn("launch failed", {{"job", launch.job_id()},
                              {"attempt", launch.attempt()},
                              {"error", message}});
  for (const v1::RankLaunch& rank : launch.ranks()) {
    const v1::RankId id = RankIdOf(launch, rank);
    RankOutcome outcome;
    outcome.exit_code = 127;
    outcome.launch_failed = true;
    outcome.node_fault = node_fault;
    outcome.message = message;
    v1::RankEvent event;
    {
      MutexLock lock(mutex_);
      v1::RankEvent ended = RankEndedEvent(id, outcome);
      ended.set_memory_restore_failed(memory_restore_failed);
      event = exits_.Record(std::move(ended));
    }
    link_->Send(RankEventMessage(event));
  }
}

Agent::~Agent() {
  // After Stop no stager or launcher thread is left to call into the
  // agent. The members then go in reverse order: the cache requests (whose
  // threads answer on the link) and the pre-flight runner (likewise) wait
  // for their threads while the link still exists.
  Stop();
}

void Agent::Run() {
  std::thread heartbeat([this] { HeartbeatLoop(); });
  link_->Run();
  heartbeat.join();
}

void Agent::Stop() {
  {
    MutexLock lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.NotifyAll();
  log::Info("stopping ranks", {{"grace_s", options_.stop_grace_seconds}});
  // Returns once every exit went through OnRankExited (which uses the
  // stager, the link and the watchers) and the launcher's threads ended.
  launcher_->Shutdown(options_.stop_grace_seconds);
  // Snapshot transfers end at once (a restore waiting on a frozen peer
  // would hold the stager's Stop below for the transfer timeout).
  if (memory_checkpoints_) memory_checkpoints_->Abort();
  // Stages still copying end here; the launches they finish are refused
  // by the launcher and reported as not started, while the link runs.
  stager_->Stop();
  link_->Stop();
}

v1::Register Agent::MakeRegister() {
  // Exits first, then running ranks (see BuildRegister): a rank that ends
  // in between has its exit follow on the stream (OnConnected).
  ExitJournal exits;
  {
    MutexLock lock(mutex_);
    exits = exits_;
  }
  v1::Register reg =
      BuildRegister(identity_, inventory_, exits, launcher_->Running());
  reg.set_preflight_port(preflight_ ? preflight_->port() : 0);
  if (std::optional<v1::DatasetCacheReport> cache = CacheReport(true)) {
    *reg.mutable_dataset_cache() = std::move(*cache);
  }
  // The same listener serves the snapshots' transfers.
  if (memory_checkpoints_) reg.set_memory_checkpoint_port(reg.preflight_port());
  *reg.mutable_memory_checkpoints() = *MemoryCheckpointReport(true);
  return reg;
}

std::optional<v1::DatasetCacheReport> Agent::CacheReport(bool always) {
  if (dataset_cache_ == nullptr) return std::nullopt;
  // The generation first: a change racing with List is reported again.
  const uint64_t generation = dataset_cache_->Generation();
  {
    MutexLock lock(mutex_);
    if (!always && generation == cache_reported_) return std::nullopt;
    cache_reported_ = generation;
  }
  return DatasetCacheReportOf(dataset_cache_->List(),
                              dataset_cache_->CapacityBytes(),
                              dataset_cache_->UsedBytes());
}

void Agent::BeatIfCacheChanged() {
  if (dataset_cache_ == nullptr) return;
  const uint64_t generation = dataset_cache_->Generation();
  {
    MutexLock lock(mutex_);
    if (generation == cache_reported_) return;
    beat_now_ = true;
  }
  wake_.NotifyAll();
}

void Agent::OnConnected() {
  // Exits that happened between building Register and the stream being
  // usable; the controller ignores the ones it already has.
  if (options_.metrics) options_.metrics->SetControllerConnected(true);
  std::deque<v1::RankEvent> pending;
  {
    MutexLock lock(mutex_);
    pending = exits_.pending();
  }
  for (const v1::RankEvent& event : pending) {
    if (!link_->Send(RankEventMessage(event))) break;
  }
}

void Agent::OnControllerMessage(const v1::ControllerMessage& message) {
  switch (message.body_case()) {
    case v1::ControllerMessage::kRegistered: {
      MutexLock lock(mutex_);
      heartbeat_interval_ms_ = HeartbeatIntervalMs(message.registered());
      break;
    }
    case v1::ControllerMessage::kLaunch: {
      const v1::LaunchRanks& launch = message.launch();
      if (launch.step() != 0) {
        CrashPoint("agent.step.after_receive_before_start");
      } else {
        CrashPoint("agent.launch.after_receive_before_start");
      }
      log::Info("launching ranks", {{"job", launch.job_id()},
                                    {"attempt", launch.attempt()},
                                    {"ranks", launch.ranks_size()}});
      if (launch.watch_checkpoints() && !launch.checkpoint_dir().empty()) {
        // The markers are the user's files: read with their credentials.
        // A user unknown here fails the launch itself, with the reason.
        absl::StatusOr<RankIdentity> user =
            ResolveLaunchIdentity(launch, options_.node_name);
        if (user.ok()) {
          checkpoints_->Watch(launch.job_id(), launch.attempt(),
                              launch.checkpoint_dir(), *user);
        }
      }
      // Ranks reach the controller that launched them (gantry progress,
      // gantry checkpoint) through the agent's own address for it.
      v1::LaunchRanks with_controller = launch;
      auto& environment = *with_controller.mutable_job_environment();
      environment["GANTRY_CONTROLLER"] = options_.controller;
      // ...and as the agent does: with its CA when it speaks TLS, and
      // without any CA the submitter's environment carried when it does not.
      environment.erase(kTlsCaVariable);
      environment.erase(kTlsServerNameVariable);
      if (!IsUnixTarget(options_.controller) && !options_.tls.ca_path.empty()) {
        environment[kTlsCaVariable] = options_.tls.ca_path;
        if (!options_.tls.server_name.empty()) {
          environment[kTlsServerNameVariable] = options_.tls.server_name;
        }
      }
      AddNodeEnvironment(with_controller);
      if (launch.memory_checkpoints()) {
        AddMemoryCheckpointDirectories(with_controller);
      }
      // A step's launch restores too: in a job whose script runs once, the
      // other nodes' first launch of an attempt is a step's.
      if ((launch.step() == 0 && launch.datasets_size() > 0) ||
          launch.has_memory_restore()) {
        stager_->Stage(std::move(with_controller));
      } else {
        StartRanks(with_controller);
      }
      break;
    }
    case v1::ControllerMessage::kKill: {
      const v1::KillRanks& kill = message.kill();
      log::Info(kill.signal_only() ? "signalling ranks" : "stopping ranks",
                {{"job", kill.job_id()},
                 {"attempt", kill.attempt()},
                 {"signal", kill.signal()},
                 {"scope", v1::KillRanks::Scope_Name(kill.scope())}});
      if (kill.signal_only() && kill.scope() != v1::KillRanks::SCOPE_ALL) {
        launcher_->SignalPart(
            kill.job_id(), kill.attempt(), kill.signal(),
            /*batch_script=*/kill.scope() == v1::KillRanks::SCOPE_BATCH_SCRIPT);
        break;
      }
      if (!kill.signal_only()) {
        WriteKillNotices(kill);
        if (kill.step() == 0) stager_->Cancel(kill.job_id(), kill.attempt());
      }
      launcher_->Kill(kill.job_id(), kill.attempt(), kill.signal(),
                      kill.grace_seconds(),
                      /*escalate=*/!kill.signal_only(), kill.step());
      break;
    }
    case v1::ControllerMessage::kAck: {
      MutexLock lock(mutex_);
      exits_.Acknowledge(message.ack().up_to_sequence());
      break;
    }
    case v1::ControllerMessage::kProbe: {
      {
        MutexLock lock(mutex_);
        beat_now_ = true;
      }
      wake_.NotifyAll();
      break;
    }
    case v1::ControllerMessage::kPreflight:
      preflight_->Start(message.preflight());
      break;
    case v1::ControllerMessage::kDatasetPrefetch:
      cache_requests_->Prefetch(message.dataset_prefetch());
      break;
    case v1::ControllerMessage::kDatasetEvict:
      cache_requests_->Evict(message.dataset_evict());
      break;
    case v1::ControllerMessage::kMemoryCheckpointPlan:
      if (memory_checkpoints_) {
        memory_checkpoints_->Plan(message.memory_checkpoint_plan());
      }
      break;
    case v1::ControllerMessage::kMemoryCheckpointDrop:
      if (memory_checkpoints_) {
        memory_checkpoints_->Drop(message.memory_checkpoint_drop().job_id());
      }
      break;
    default:
      break;
  }
}

void Agent::WriteKillNotices(const v1::KillRanks& kill) {
  const std::string time = SlurmTimeString(std::time(nullptr));
  // Only the reasons Slurm announces (a cancel, a time limit) write.
  if (!FormatKillNotice(kill.job_id(), 0, options_.node_name, kill.reason(),
                        time)) {
    return;
  }
  for (const KillNoticeTarget& target : launcher_->TakeKillNoticeTargets(
           kill.job_id(), kill.attempt(), kill.step())) {
    const std::string line = *FormatKillNotice(
        target.job_id, target.step, options_.node_name, kill.reason(), time);
    // Before the signal, as slurmstepd does; bounded, so a user's stalled
    // file system delays the stop by at most this.
    const absl::Status written =
        WriteKillNotice(target, line, std::chrono::milliseconds(1000));
    if (written.ok()) continue;
    const std::initializer_list<log::Field> fields = {
        {"job", target.job_id},
        {"step", target.step},
        {"error", std::string(written.message())}};
    // No file or no regular file (-e /dev/null): nowhere to write, as
    // asked. Anything else is worth a look.
    if (absl::IsNotFound(written) || absl::IsInvalidArgument(written)) {
      log::Info("no cancel notice written into the job's output", fields);
    } else {
      log::Warn("cannot write the cancel notice into the job's output", fields);
    }
  }
}

void Agent::AddNodeEnvironment(v1::LaunchRanks& launch) const {
  const std::vector<Nic> nics = NicsOf(inventory_);
  for (v1::RankLaunch& rank : *launch.mutable_ranks()) {
    const std::vector<uint32_t> gpus(rank.gpu_indices().begin(),
                                     rank.gpu_indices().end());
    for (const auto& [key, value] : NcclEnvironment(nics, gpus)) {
      // A job that sets its own NCCL network variables keeps them.
      if (!launch.job_environment().contains(key)) {
        (*rank.mutable_environment())[key] = value;
      }
    }
    // As the controller's CUDA_VISIBLE_DEVICES, these override the job's.
    for (auto& [key, value] : GpuRuntimeEnvironment(inventory_, gpus)) {
      (*rank.mutable_environment())[key] = std::move(value);
    }
  }
}

void Agent::OnRankStarted(const v1::RankId& rank, pid_t pid) {
  if (options_.metrics) options_.metrics->CountRankStarted();
  // Informational: lost if disconnected, that's fine.
  link_->Send(RankStartedMessage(rank, pid));
}

void Agent::OnRankExited(const v1::RankId& rank, const RankOutcome& outcome) {
  if (options_.metrics) {
    options_.metrics->CountRankEnded(outcome.launch_failed, outcome.exit_code,
                                     outcome.signal);
  }
  bool attempt_over = true;
  for (const v1::RankId& other : launcher_->Running()) {
    // Running() still lists this rank until this callback returns.
    const bool itself =
        other.step() == rank.step() && other.rank() == rank.rank();
    if (other.job_id() == rank.job_id() && other.attempt() == rank.attempt() &&
        !itself) {
      attempt_over = false;
    }
  }
  // Unpinned before the controller hears of the end, so the job's next
  // run (or a changed version) finds its datasets free.
  if (attempt_over && rank.step() == 0) stager_->Release(rank.job_id());
  v1::RankEvent event;
  {
    MutexLock lock(mutex_);
    event = exits_.Record(RankEndedEvent(rank, outcome));
  }
  CrashPoint("agent.exit.before_report");
  link_->Send(RankEventMessage(event));
  if (attempt_over) checkpoints_->Forget(rank.job_id(), rank.attempt());
}

void Agent::HeartbeatLoop() {
  // The systemd watchdog is pinged from this loop, the agent's own: a
  // deadlock on mutex_ or a hung health check stops the pings. It may have
  // to wake more often than it heartbeats.
  const std::chrono::milliseconds ping_every =
      options_.watchdog_ping ? options_.watchdog_interval
                             : std::chrono::milliseconds(0);
  auto last_beat = std::chrono::steady_clock::now();
  MutexLock lock(mutex_);
  while (!stopping_) {
    const std::chrono::milliseconds beat_every(heartbeat_interval_ms_);
    auto deadline = last_beat + beat_every;
    if (ping_every.count() > 0) {
      deadline =
          std::min(deadline, std::chrono::steady_clock::now() + ping_every);
    }
    wake_.WaitUntil(lock, deadline, [this] {
      mutex_.AssertHeld();
      return stopping_ || beat_now_;
    });
    if (stopping_) break;
    const bool probed = std::exchange(beat_now_, false);
    lock.Unlock();
    if (options_.watchdog_ping) options_.watchdog_ping();
    if (!probed && std::chrono::steady_clock::now() - last_beat < beat_every) {
      lock.Lock();
      continue;
    }
    last_beat = std::chrono::steady_clock::now();
    v1::AgentMessage message = HeartbeatMessage(
        LoadAverage(), static_cast<uint32_t>(launcher_->Running().size()),
        health_->Check(), health_->TakePortUpdates());
    for (v1::JobUsageSample& sample :
         launcher_->MeasureUsage(RealClock().NowMs())) {
      *message.mutable_heartbeat()->add_job_usage() = std::move(sample);
    }
    for (v1::RankProgressReport& report : launcher_->ReadProgress()) {
      *message.mutable_heartbeat()->add_rank_progress() = std::move(report);
    }
    // A hold for a job that went elsewhere lapses here at the latest.
    if (dataset_cache_ != nullptr) dataset_cache_->ExpireHolds();
    if (std::optional<v1::DatasetCacheReport> cache = CacheReport(false)) {
      *message.mutable_heartbeat()->mutable_dataset_cache() = std::move(*cache);
    }
    if (std::optional<v1::MemoryCheckpointReport> held =
            MemoryCheckpointReport(false)) {
      *message.mutable_heartbeat()->mutable_memory_checkpoints() =
          std::move(*held);
    }
    if (options_.metrics) {
      options_.metrics->SetRanksRunning(message.heartbeat().running_ranks());
      options_.metrics->SetHealthProblems(
          message.heartbeat().health_problems_size());
      // A stream that broke since the last beat shows here.
      options_.metrics->SetControllerConnected(link_->connected());
      if (dataset_cache_ != nullptr) {
        options_.metrics->SetDatasetCache(dataset_cache_->Counters(),
                                          dataset_cache_->UsedBytes());
      }
    }
    link_->Send(message);
    lock.Lock();
  }
}

}  // namespace gantry::agent
