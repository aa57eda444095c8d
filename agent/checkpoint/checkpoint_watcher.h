// Watches the checkpoint directories of the jobs whose rank 0 runs on this
// node and reports each new checkpoint marker (see checkpoint_markers.h).
// Markers are read as the job's user, each read in a child process with a
// timeout (see user_file_access.h), so a marker the user may not read is
// never reported and a hung file system delays only this watcher.
//
// Thread-safe: Watch/Forget from any thread, and neither ever reads a
// file; one polling thread reads and reports.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "agent/launch/rank_identity.h"
#include "common/mutex.h"
#include "gantry/v1/agent.pb.h"

namespace gantry::agent {

class CheckpointWatcher {
 public:
  using Reporter = std::function<void(const v1::CheckpointReport&)>;

  // `read_timeout`: the longest one marker read may take.
  CheckpointWatcher(
      Reporter report, int interval_ms,
      std::chrono::milliseconds read_timeout = std::chrono::seconds(2));
  ~CheckpointWatcher();

  // Watches `directory` with the credentials of `user`, the job's user.
  void Watch(uint64_t job_id, uint32_t attempt, const std::string& directory,
             const RankIdentity& user);
  // Has the polling thread read the directory one last time (a checkpoint
  // written just before the ranks ended still counts), then stop watching
  // it. Returns at once.
  void Forget(uint64_t job_id, uint32_t attempt);

 private:
  struct Watched {
    std::string directory;
    RankIdentity user;
    std::string last_path;   // last reported
    std::string last_error;  // last logged, so a bad marker is logged once
    bool forgotten = false;  // read once more, then drop
  };
  using Key = std::pair<uint64_t, uint32_t>;

  void Loop();
  // Reads one directory; reports when the marker changed.
  void Poll(const Key& key, Watched& watched);

  const Reporter report_;
  const int interval_ms_;
  const std::chrono::milliseconds read_timeout_;
  Mutex mutex_;
  CondVar wake_;
  std::map<Key, Watched> watched_ ABSL_GUARDED_BY(mutex_);
  bool final_reads_due_ ABSL_GUARDED_BY(mutex_) = false;
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  std::thread thread_;
};

}  // namespace gantry::agent
