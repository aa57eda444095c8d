// Watches the checkpoint directories of the jobs whose rank 0 runs on this
// node and reports each new checkpoint marker (see checkpoint_markers.h).
//
// Thread-safe: Watch/Forget from any thread; one polling thread reports.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "gantry/v1/agent.pb.h"

namespace gantry::agent {

class CheckpointWatcher {
 public:
  using Reporter = std::function<void(const v1::CheckpointReport&)>;

  CheckpointWatcher(Reporter report, int interval_ms);
  ~CheckpointWatcher();

  void Watch(uint64_t job_id, uint32_t attempt, const std::string& directory);
  // Reads the directory one last time (a checkpoint written just before the
  // ranks ended still counts), then stops watching it.
  void Forget(uint64_t job_id, uint32_t attempt);

 private:
  struct Watched {
    std::string directory;
    std::string last_path;   // last reported
    std::string last_error;  // last logged, so a bad marker is logged once
  };
  using Key = std::pair<uint64_t, uint32_t>;

  void Loop();
  // Reads one directory; reports when the marker changed.
  void Poll(const Key& key, Watched& watched);

  const Reporter report_;
  const int interval_ms_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::map<Key, Watched> watched_;  // guarded by mutex_
  bool stopping_ = false;           // guarded by mutex_
  std::thread thread_;
};

}  // namespace gantry::agent
