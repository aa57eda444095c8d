// Removes finished attempts' job directories (job_directory.h) off the
// reaper's path, so that a rank's exit reaches the controller without
// waiting for a process to act as the user (user_file_access.h) and for
// the tree to be removed. The reaper only renames the directory aside, one
// system call in the agent's own jobs/ directory, and reports the exit;
// one thread removes what was set aside. (Not at a lower CPU priority:
// tried with the earlier fork-style child, a clone preempted while it held
// the agent's memory map lock made every agent thread wait.) The new name
// is one no attempt uses (".gone.JOB.ATTEMPT.N"), so a later step of the
// same attempt that makes the directory again is never removed by an
// earlier step's clean-up. A crash leaves such directories in jobs/, which
// the next start removes with every other leftover there.
//
// Thread-safe: Discard from any thread; one thread removes.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "common/mutex.h"

namespace gantry::agent {

class JobDirectoryReclaimer {
 public:
  JobDirectoryReclaimer();
  // Removes what is still queued (each removal bounded as
  // RemoveJobDirectory bounds it), then stops.
  ~JobDirectoryReclaimer();

  // Sets `job_dir` aside at once and queues its removal; when it cannot
  // be renamed (it is gone, or not in a directory the agent can write),
  // removes it here and now, as before.
  void Discard(const std::string& job_dir);
  // Returns once everything queued before the call is removed.
  void Drain();

 private:
  void Loop();

  Mutex mutex_;
  CondVar changed_;
  std::deque<std::string> queue_ ABSL_GUARDED_BY(mutex_);
  // Numbers the names set aside, and tells Drain what to wait for.
  uint64_t discarded_ ABSL_GUARDED_BY(mutex_) = 0;
  uint64_t removed_ ABSL_GUARDED_BY(mutex_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  std::thread thread_;
};

}  // namespace gantry::agent
