// Starts ranks as real processes and watches them until they exit.
//
// Each rank runs the job's script in its own session (so its whole process
// group can be signalled), in the job's working directory, with stdout and
// stderr appended to the job's files. A reaper thread collects exits and
// reports them through the callback; a timer thread escalates a stop from
// SIGTERM to SIGKILL after the grace period.
//
// A rank runs as the submitting user (see rank_identity.h) with nothing of
// root left (see rank_child.h): uid, gid and groups set and checked (it
// cannot get root back), no new privileges through setuid programs, no
// inherited descriptors, and an environment built from the job's request
// only (see sanitized_environment.h). With job cgroups (see job_cgroup.h)
// every rank of a job attempt joins its cgroup before exec, so stopping the
// job stops whatever its ranks started, and OOM kills are told apart;
// without them, ranks are stopped by process group.
//
// Ranks never outlive their agent silently: a file per live rank under
// WORK_DIR/ranks records its pid and start time, and a starting agent kills
// whatever an earlier agent process left running (see CleanUpLeftovers).
//
// Thread-safe: every public method may be called from any thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/launch/job_cgroup.h"
#include "agent/launch/job_directory_reclaimer.h"
#include "agent/launch/kill_notice.h"
#include "agent/launch/rank_identity.h"
#include "common/mutex.h"
#include "gantry/v1/agent.pb.h"

namespace gantry::agent {

// How a rank ended.
struct RankOutcome {
  int exit_code = 0;  // valid when signal == 0
  int signal = 0;
  bool launch_failed = false;  // never started; `message` says why
  // Ended by the kernel's OOM killer acting in the job's cgroup.
  bool out_of_memory = false;
  // launch_failed because of the node (its dataset cache), not the job.
  bool node_fault = false;
  std::string message;
};

struct RankLauncherOptions {
  std::string work_dir;
  std::string node_name;                // for messages
  std::unique_ptr<JobCgroups> cgroups;  // null: process groups only
};

// The id of `rank` of `launch` (job, attempt, rank, step).
v1::RankId RankIdOf(const v1::LaunchRanks& launch, const v1::RankLaunch& rank);

// Who `launch`'s ranks run as on node `node_name` (see rank_identity.h):
// the job's user when the agent is root, else the agent's own user.
// Errors: FAILED_PRECONDITION, as ResolveRankIdentity.
absl::StatusOr<RankIdentity> ResolveLaunchIdentity(
    const v1::LaunchRanks& launch, const std::string& node_name);

class RankLauncher {
 public:
  // Called from the reaper thread when a rank ends, or from Launch when it
  // could not start.
  using ExitCallback =
      std::function<void(const v1::RankId& rank, const RankOutcome& outcome)>;
  using StartCallback = std::function<void(const v1::RankId& rank, pid_t pid)>;

  RankLauncher(RankLauncherOptions options, StartCallback on_start,
               ExitCallback on_exit);
  ~RankLauncher();  // Shutdown(5)

  // Kills (SIGKILL, whole process group and job cgroup) ranks an earlier
  // agent process left behind, as recorded under WORK_DIR/ranks. Returns
  // how many processes and cgroups it killed.
  int CleanUpLeftovers();

  // Starts every rank of `launch`. A rank that cannot start is reported
  // through the exit callback with launch_failed set; then no rank of the
  // launch is left running (those that started are killed). A launch whose
  // user is unknown on this node, or whose cgroup cannot be made, starts
  // nothing.
  void Launch(const v1::LaunchRanks& launch);

  // Signals every rank of the job attempt (attempt 0: any attempt); ranks
  // still alive after `grace_seconds` get SIGKILL, unless `escalate` is
  // false (scancel --signal: the signal alone, the job goes on).
  // `step` non-zero: that step's tasks only.
  void Kill(uint64_t job_id, uint32_t attempt, int signal,
            uint32_t grace_seconds, bool escalate = true, uint32_t step = 0);

  // sbatch --signal: `signal` to the batch script's own process alone (not
  // what it started; B:), or else to every step task's process group.
  void SignalPart(uint64_t job_id, uint32_t attempt, int signal,
                  bool batch_script);

  // Ends the launcher's work for good: no rank starts after it begins (a
  // Launch then reports every rank as not started, the node's fault);
  // every rank is stopped (SIGTERM, then SIGKILL after `grace_seconds`);
  // and it returns once each exit has been handed to the exit callback and
  // the reaper and escalator threads have ended, so that neither calls
  // into the owner after this. Idempotent; the destructor calls it.
  void Shutdown(uint32_t grace_seconds);

  // Ranks started and not yet handed to the exit callback: a rank whose
  // process ended is listed until the callback returns, so that a Register
  // built meanwhile (exits first, then running ranks) never misses it and
  // makes the controller think its launch was lost.
  std::vector<v1::RankId> Running() const;

  // Where Slurm's cancel notice goes for what Kill(job_id, attempt, ...,
  // step) stops here: the batch script's stderr when its rank 0 runs on
  // this node, and each step's whose task 0 does (step 0: every step of
  // the attempt; else that step alone). Each target is handed out once:
  // a step stopped by srun's own cancel and then by the job's gets one
  // line, as under Slurm.
  std::vector<KillNoticeTarget> TakeKillNoticeTargets(uint64_t job_id,
                                                      uint32_t attempt,
                                                      uint32_t step);

  // sstat: each job attempt running here, with the CPU time and memory of
  // its processes (agent/launch/job_usage.h), as of `now_ms`.
  std::vector<v1::JobUsageSample> MeasureUsage(int64_t now_ms) const;

  // Each job attempt running here with its ranks' progress files read
  // (agent/launch/rank_progress.h); attempts none of whose ranks wrote one are
  // left out.
  std::vector<v1::RankProgressReport> ReadProgress() const;

 private:
  struct LiveRank {
    v1::RankId id;
    pid_t pid = 0;
    std::string record_path;
    // Rank (or task) 0 only, until taken: where its stderr goes.
    std::optional<KillNoticeTarget> notice;
  };

  absl::Status StartOne(const v1::LaunchRanks& launch,
                        const v1::RankLaunch& rank,
                        const std::string& script_path,
                        const RankIdentity& identity,
                        const std::string& cgroup_procs_path, pid_t& pid_out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Resolves the user, writes the script (none for a step's command run
  // as it is), makes the job cgroup. Fills `identity` and
  // `cgroup_procs_path` (empty without cgroups).
  absl::Status PrepareLaunch(const v1::LaunchRanks& launch,
                             const std::string& job_dir,
                             const std::string& script_path,
                             RankIdentity& identity,
                             std::string& cgroup_procs_path);
  // SIGKILL to a rank: its job cgroup, else its process group.
  void KillRankNow(const LiveRank& rank) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void ReapLoop();
  void EscalateLoop();
  // Stops every rank (SIGTERM, then SIGKILL after `grace_seconds`) and waits
  // until each is reaped and its exit handed to on_exit_, at most grace +
  // 2 s.
  void KillAllAndWait(uint32_t grace_seconds);

  const std::string work_dir_;
  const std::string node_name_;
  const std::unique_ptr<JobCgroups> cgroups_;
  const StartCallback on_start_;
  const ExitCallback on_exit_;

  mutable Mutex mutex_;
  CondVar changed_;
  std::map<pid_t, LiveRank> live_ ABSL_GUARDED_BY(mutex_);
  // Reaped, their exit not yet through on_exit_ (see Running).
  std::vector<v1::RankId> exiting_ ABSL_GUARDED_BY(mutex_);
  std::multimap<int64_t, pid_t> kill_deadlines_ ABSL_GUARDED_BY(mutex_);
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  // Shutdown began: Launch starts nothing.
  bool shut_down_ ABSL_GUARDED_BY(mutex_) = false;
  // Declared before the threads that discard into it, so it outlives them.
  JobDirectoryReclaimer reclaimer_;
  std::thread reaper_;
  std::thread escalator_;
};

}  // namespace gantry::agent
