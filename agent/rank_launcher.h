// Starts ranks as real processes and watches them until they exit.
//
// Each rank runs the job's script in its own session (so its whole process
// group can be signalled), in the job's working directory, with stdout and
// stderr appended to the job's files. A reaper thread collects exits and
// reports them through the callback; a timer thread escalates a stop from
// SIGTERM to SIGKILL after the grace period.
//
// Ranks never outlive their agent silently: a file per live rank under
// WORK_DIR/ranks records its pid and start time, and a starting agent kills
// whatever an earlier agent process left running (see CleanUpLeftovers).
//
// Thread-safe: every public method may be called from any thread.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "gantry/v1/agent.pb.h"

namespace gantry::agent {

class RankLauncher {
 public:
  // Called from the reaper thread when a rank ends, or from Launch when it
  // could not start (`launch_failed`, with `message` saying why).
  using ExitCallback =
      std::function<void(const v1::RankId& rank, int exit_code, int signal,
                         bool launch_failed, const std::string& message)>;
  using StartCallback = std::function<void(const v1::RankId& rank, pid_t pid)>;

  RankLauncher(std::string work_dir, StartCallback on_start,
               ExitCallback on_exit);
  ~RankLauncher();  // stops the threads; ranks still running are killed

  // Kills (SIGKILL, whole process group) ranks an earlier agent process
  // left behind, as recorded under WORK_DIR/ranks. Returns how many.
  int CleanUpLeftovers();

  // Starts every rank of `launch`. A rank that cannot start is reported
  // through the exit callback with launch_failed set.
  void Launch(const v1::LaunchRanks& launch);

  // Signals every rank of the job attempt (attempt 0: any attempt); ranks
  // still alive after `grace_seconds` get SIGKILL.
  void Kill(uint64_t job_id, uint32_t attempt, int signal,
            uint32_t grace_seconds);

  // Stops every rank (SIGTERM, then SIGKILL after `grace_seconds`) and waits
  // for them to be reaped, at most grace + 2 s.
  void KillAllAndWait(uint32_t grace_seconds);

  std::vector<v1::RankId> Running() const;

 private:
  struct LiveRank {
    v1::RankId id;
    pid_t pid = 0;
    std::string record_path;
  };

  absl::Status StartOne(const v1::LaunchRanks& launch,
                        const v1::RankLaunch& rank,
                        const std::string& script_path, pid_t& pid_out);
  void ReapLoop();
  void EscalateLoop();

  const std::string work_dir_;
  const StartCallback on_start_;
  const ExitCallback on_exit_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::map<pid_t, LiveRank> live_;                // guarded by mutex_
  std::multimap<int64_t, pid_t> kill_deadlines_;  // guarded by mutex_
  bool stopping_ = false;                         // guarded by mutex_
  std::thread reaper_;
  std::thread escalator_;
};

}  // namespace gantry::agent
