// Retention: a finished job stays in the live state for --min-job-age
// (listings, dependencies, `gantry queue --all`), then moves to the
// history column family, where `gantry job ID` still finds it until
// --history-retention has passed. Both moves are bounded per tick, so a
// backlog (a store from before retention, a burst of short jobs) drains
// over a few seconds instead of stalling the loop. Expiry reads only the
// history's expiry index, on the history thread; the loop stages the ids
// it found (at most a batch a pass) into a commit like any other, so that
// a replicated controller's deletions go through its log.
//
// Threading: the controller's loop, except the reads it hands the history
// worker.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "daemon/controller/core/cluster_state.h"
#include "daemon/controller/core/commit_pipeline.h"
#include "daemon/controller/core/controller_feature.h"
#include "daemon/controller/core/controller_options.h"
#include "daemon/controller/core/history_worker.h"
#include "daemon/scheduler/priority.h"
#include "daemon/store/state_store.h"

namespace gantry {

class JobRetention {
 public:
  // What retention works with; every reference outlives it (the history
  // worker is joined before it goes).
  struct Parts {
    boost::asio::io_context& io;
    StateStore& store;
    const Clock& clock;
    const ControllerOptions& options;
    ClusterState& state;
    CommitPipeline& commits;
    HistoryWorker& history_worker;
    const FeatureList& features;
    // A job left the live state (the controller forgets what it indexed
    // of it beside the tables).
    std::function<void(const v1::JobRecord&)> on_retired;
  };
  explicit JobRetention(Parts parts);
  JobRetention(const JobRetention&) = delete;
  JobRetention& operator=(const JobRetention&) = delete;

  // Moves finished jobs older than min_job_age_ms (and that no live job
  // depends on) from memory to the history, a bounded number per call, and
  // deletes history records past their retention; at most once a second.
  void OnTick(int64_t now_ms);
  // The controller stops: an expiry read under way is not staged.
  void Stop() { stopped_ = true; }

  // A job that left the live state: from the batches being written, else
  // from the history. `task`: the task of array `job_id` instead.
  absl::StatusOr<std::optional<v1::JobRecord>> RetiredJob(
      uint64_t job_id, std::optional<uint32_t> task) const;

  // The fair-share usage of the jobs that left memory (stored with each
  // retirement; the lifecycle's fair share includes it). Restored at start.
  FairShare& retired_usage() { return retired_usage_; }

 private:
  void ExpireHistory(int64_t now);
  // On the loop, with what an expiry pass found on the history thread.
  void StageExpiry(absl::StatusOr<std::vector<uint64_t>> expired,
                   bool more_to_index);
  // Ids that dependencies of live jobs name (an array's id for its tasks).
  std::set<uint64_t> DependedJobIds() const;

  Parts parts_;
  FairShare retired_usage_;
  int64_t next_retire_ms_ = 0;
  int64_t next_expiry_ms_ = 0;
  // An expiry pass is on the history thread, or its deletions are not
  // committed yet: the next one waits, so it does not find them again.
  bool expiry_running_ = false;
  bool stopped_ = false;
  // Held only here: what the history thread posts to the loop holds a
  // weak pointer to it, and does nothing once this is gone.
  const std::shared_ptr<const int> lifetime_ = std::make_shared<const int>(0);
};

}  // namespace gantry
