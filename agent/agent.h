// The agent: one per node. Discovers the node once, keeps the controller
// stream, launches and stops ranks as told, heartbeats, and reports every
// rank exit until the controller acknowledges it (exits that happen while the
// controller is away are carried in the next Register).
//
// Thread-safe: the controller link, the heartbeat thread and the launcher's
// reaper call into it concurrently; shared state is under mutex_.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "agent/checkpoint/checkpoint_watcher.h"
#include "agent/checkpoint/memory_checkpoint_service.h"
#include "agent/datasets/dataset_cache.h"
#include "agent/datasets/dataset_cache_requests.h"
#include "agent/datasets/dataset_stager.h"
#include "agent/discovery/health_monitor.h"
#include "agent/launch/rank_launcher.h"
#include "agent/link/agent_messages.h"
#include "agent/link/controller_link.h"
#include "agent/preflight/preflight_runner.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "gantry/v1/agent.pb.h"

namespace gantry::agent {

class AgentMetrics;

struct AgentOptions {
  std::string controller;    // gRPC target
  std::string munge_socket;  // empty: libmunge's default
  ClientTls tls;             // TLS to a TCP controller (--tls-ca)
  std::string node_name;
  std::string address;  // where other nodes reach this one (MASTER_ADDR)
  std::string work_dir;
  // What jobs' --constraint matches on this node (--features).
  std::vector<std::string> features;
  uint32_t stop_grace_seconds = 10;
  // Where GPUs are looked up for health checks; empty: not checked.
  std::string sysfs_root;
  int checkpoint_poll_ms = 2000;
  // Called from the heartbeat loop at least every watchdog_interval (the
  // systemd watchdog, common/systemd_notify.h); empty: never.
  std::function<void()> watchdog_ping;
  std::chrono::milliseconds watchdog_interval{0};
  // Job cgroups (--cgroups, --cgroup-root); node_name is filled in too.
  CgroupSettings cgroups;
  // Where the agent reports its metrics; null: nowhere. Must outlive it.
  AgentMetrics* metrics = nullptr;
  // TCP port of the pre-flight listener on `address` (0: any free port).
  uint32_t preflight_port = 0;
  // The dataset cache ([agent] cache-dir, cache-size, cache-user-limit;
  // an empty cache_dir means WORK_DIR/datasets).
  std::string cache_dir;
  uint64_t cache_size_bytes = 0;
  uint64_t cache_user_limit_bytes = 0;  // 0: no limit beyond the size
  // In-memory checkpoints ([agent] memory-checkpoint-dir and -limit): an
  // empty directory means /dev/shm/gantry/NODE_NAME; a limit of 0 a
  // quarter of the node's memory per job.
  std::string memory_checkpoint_dir;
  uint64_t memory_checkpoint_limit_bytes = 0;
};

class Agent {
 public:
  Agent(AgentOptions options, v1::NodeInventory inventory);
  ~Agent();

  // Runs until Stop: connects, serves the controller, heartbeats.
  void Run();
  // Stops for good: the ranks (SIGTERM, grace, SIGKILL; each exit reported
  // while the link still runs, no rank started after), then the dataset
  // stages, then the link, which ends Run. Returns once no thread of the
  // launcher or the stager is left to call back into the agent.
  // Thread-safe; the destructor calls it.
  void Stop();

 private:
  v1::Register MakeRegister();
  void OnControllerMessage(const v1::ControllerMessage& message);
  void OnConnected();
  void OnRankStarted(const v1::RankId& rank, pid_t pid);
  void OnRankExited(const v1::RankId& rank, const RankOutcome& outcome);
  void HeartbeatLoop();
  // The cache's content when it changed since the last report (or
  // `always`), noting it as reported.
  std::optional<v1::DatasetCacheReport> CacheReport(bool always);
  // After a stage: beats now if the cache changed, so that the controller
  // knows where the data is before it places the next job.
  void BeatIfCacheChanged();
  // NCCL_IB_HCA, NCCL_SOCKET_IFNAME and NCCL_IB_GID_INDEX for each rank,
  // from this node's compute and management networks and the rank's GPUs,
  // and the GPU visibility variables this node's GPU vendors read
  // (gpu_environment.h).
  void AddNodeEnvironment(v1::LaunchRanks& launch) const;
  // Slurm's "*** JOB N ON NODE CANCELLED AT ... ***" lines for what `kill`
  // stops here, when its reason is one Slurm announces (kill_notice.h).
  void WriteKillNotices(const v1::KillRanks& kill);
  // Opens the dataset cache and its stager (an unusable cache is logged:
  // the agent serves jobs without datasets all the same).
  void OpenDatasetCache();
  // Starts `launch`'s ranks (once its datasets, if any, are staged).
  void StartRanks(const v1::LaunchRanks& launch);
  // Reports every rank of `launch` as not started, saying why.
  void FailLaunch(const v1::LaunchRanks& launch, const std::string& message,
                  bool node_fault, bool memory_restore_failed = false);
  // Opens the node's in-memory checkpoint store and its service (an
  // unusable directory is logged and reported: jobs then run without).
  void OpenMemoryCheckpoints();
  // GANTRY_MEMORY_CHECKPOINT_DIR for each rank of a --memory-checkpoints
  // launch, its directory made for the job's user.
  void AddMemoryCheckpointDirectories(v1::LaunchRanks& launch);
  // The restore before a launch's ranks start (DatasetStager::Prepare).
  bool RestoreMemoryCheckpoints(const v1::LaunchRanks& launch);
  std::optional<v1::MemoryCheckpointReport> MemoryCheckpointReport(bool always);

  const AgentOptions options_;
  const v1::NodeInventory inventory_;
  const AgentIdentity identity_;

  Mutex mutex_;
  CondVar wake_;
  ExitJournal exits_ ABSL_GUARDED_BY(mutex_);
  uint32_t heartbeat_interval_ms_ ABSL_GUARDED_BY(mutex_) = 1000;
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  // The controller probed (ControllerMessage.probe): beat now.
  bool beat_now_ ABSL_GUARDED_BY(mutex_) = false;
  // The dataset cache's generation last reported (Register, heartbeat).
  uint64_t cache_reported_ ABSL_GUARDED_BY(mutex_) = ~uint64_t{0};

  std::unique_ptr<RankLauncher> launcher_;
  std::unique_ptr<ControllerLink> link_;
  std::unique_ptr<CheckpointWatcher> checkpoints_;
  std::unique_ptr<HealthMonitor> health_;
  // Before the pre-flight runner: its listener hands this service
  // connections, so it must go first.
  std::unique_ptr<MemoryCheckpointService> memory_checkpoints_;
  std::string memory_checkpoint_problem_;  // set once at start
  // Last: its checks use the link and the health monitor, so it goes first.
  std::unique_ptr<PreflightRunner> preflight_;
  RealClock clock_;
  std::unique_ptr<DatasetWorker> dataset_worker_;
  std::unique_ptr<DatasetCache> dataset_cache_;  // null: unusable
  // Reset first in the destructor: its threads start and fail launches.
  std::unique_ptr<DatasetStager> stager_;
  // Prefetches and evictions the controller asks for; reset with stager_
  // (its threads answer on the link).
  std::unique_ptr<DatasetCacheRequests> cache_requests_;
};

}  // namespace gantry::agent
