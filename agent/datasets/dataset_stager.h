// Stages a launch's datasets (LaunchRanks.datasets) into the node's cache
// before its ranks start, off the agent's message thread, and hands the
// launch on with GANTRY_DATASET_<NAME> set to each local copy; or reports
// why it could not, naming the node, the dataset and the file. Each node's
// agent stages its own copy, so a gang's nodes stage in parallel.
//
// The staged entries stay pinned (never evicted) until the attempt's ranks
// on this node have all ended (Release).
//
// Thread-safe: Stage and Release may be called from any thread; each stage
// runs on its own (detached) thread, and the destructor waits for them all.
// `ready` is always called from one long-lived thread of the stager's own:
// ranks die with the thread that forked them (PR_SET_PDEATHSIG), so they
// must not be started from a stage's thread, which ends with the stage.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "agent/datasets/dataset_cache.h"
#include "agent/launch/rank_identity.h"
#include "common/mutex.h"
#include "gantry/v1/agent.pb.h"

namespace gantry::agent {

class DatasetStager {
 public:
  using Ready = std::function<void(const v1::LaunchRanks&)>;
  // `node_fault`: the node is to blame (DatasetCache::IsNodeFault).
  using Failed = std::function<void(
      const v1::LaunchRanks&, const std::string& message, bool node_fault)>;

  // Reports how far a dataset is staged (to the controller).
  using Progress = std::function<void(const v1::DatasetProgress&)>;
  // The launch's last step before its ranks start, on the stage's thread
  // (restoring in-memory checkpoints); false: it failed and reported the
  // launch as not started itself.
  using Prepare = std::function<bool(const v1::LaunchRanks&)>;

  // `cache` may be null (no usable cache on this node: every launch with
  // datasets fails as the node's fault, with `cache_problem` as the reason).
  DatasetStager(DatasetCache* cache, std::string cache_problem,
                std::string node_name, Ready ready, Failed failed,
                Progress progress, Prepare prepare);
  ~DatasetStager();  // Stop()

  // Waits for the stages running, then for their launches to have gone to
  // `ready`, and ends the stager's thread; a Stage after it reports the
  // launch as not started, the node's fault. Idempotent. Not to be called
  // from `ready`, `failed` or `progress`.
  void Stop();

  // Stages `launch`'s datasets (if any) as its user, then `prepare`s it,
  // then calls `ready` with the launch and the variables added (or
  // `failed`).
  void Stage(v1::LaunchRanks launch);

  // Unpins what `job` staged here.
  void Release(uint64_t job);

  // The controller stopped `job`'s `attempt`: a stage of it still running
  // does not start its ranks (it reports them as not started instead).
  void Cancel(uint64_t job, uint32_t attempt);

 private:
  void Run(v1::LaunchRanks launch);
  // Stages the launch's datasets and sets their variables in it; false:
  // it failed and was reported.
  bool StageDatasets(v1::LaunchRanks& launch);
  bool Cancelled(const v1::LaunchRanks& launch);
  void StartReadyLaunches();

  DatasetCache* const cache_;
  const std::string cache_problem_;
  const std::string node_name_;
  const Ready ready_;
  const Failed failed_;
  const Progress progress_;
  const Prepare prepare_;
  Mutex mutex_;
  CondVar idle_;
  int running_ ABSL_GUARDED_BY(mutex_) = 0;
  // Attempts being staged, and those of them cancelled.
  std::set<std::pair<uint64_t, uint32_t>> staging_ ABSL_GUARDED_BY(mutex_);
  std::set<std::pair<uint64_t, uint32_t>> cancelled_ ABSL_GUARDED_BY(mutex_);
  std::deque<v1::LaunchRanks> ready_launches_ ABSL_GUARDED_BY(mutex_);
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  std::thread starter_;  // calls ready_ for ready_launches_
};

// The user a launch's files are read as.
DatasetUser DatasetUserOf(const RankIdentity& identity);

// Logs `message` ("dataset staged", "dataset prefetched") with what the
// stage of `dataset` for `job` did and how long it took since `started`.
void LogStaged(std::string_view message, uint64_t job,
               const std::string& dataset, const StagedDataset& staged,
               std::chrono::steady_clock::time_point started);

}  // namespace gantry::agent
