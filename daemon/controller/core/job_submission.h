// Submission: a job spec is checked field by field and against the
// partitions and the nodes known (whether it could ever run, and where),
// then staged as one record per job (one per task of an array) in the
// turn's batch; the reply goes out once that batch is durable. A retried
// submission (the same user's token) gets the job it made, and a sweep's
// identical environments are stored once (recent_environments.h).
//
// Threading: the controller's loop only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/clock.h"
#include "common/ids.h"
#include "daemon/controller/core/allocation_liveness.h"
#include "daemon/controller/core/caller.h"
#include "daemon/controller/core/cluster_state.h"
#include "daemon/controller/core/commit_pipeline.h"
#include "daemon/controller/core/controller_options.h"
#include "daemon/controller/core/controller_statistics.h"
#include "daemon/controller/core/pass_pacer.h"
#include "daemon/controller/core/recent_environments.h"
#include "daemon/controller/core/scheduling_pass.h"
#include "daemon/controller/core/switch_tree.h"
#include "daemon/scheduler/partition_config.h"
#include "gantry/v1/client.pb.h"

namespace gantry {

class JobSubmission {
 public:
  // What submission works with; every reference outlives it.
  struct Parts {
    const Clock& clock;
    const ControllerOptions& options;
    ClusterState& state;
    CommitPipeline& commits;
    PassPacer& passes;
    ControllerStatistics& statistics;
    AllocationLiveness& allocation_liveness;
    const SwitchTree& switch_tree;     // a job must fit one part of the fabric
    const SchedulingPass& scheduling;  // the node snapshot
  };
  explicit JobSubmission(Parts parts);
  JobSubmission(const JobSubmission&) = delete;
  JobSubmission& operator=(const JobSubmission&) = delete;

  // The state is loaded (at `started_ms`, wall clock): the live jobs'
  // submission tokens are known again, and nodes that have not registered
  // since may still bring GPU types (gpu_type_census.h).
  void OnStateLoaded(int64_t started_ms);
  // A job left the live state: a retry of its submission is a new job.
  void OnJobRetired(const v1::JobRecord& record);

  // `done` runs once the job (every task of an array) is durable, or at
  // once with the reason it was refused. `caller` owns the job.
  void Submit(v1::SubmitRequest request, const Caller& caller,
              std::function<void(absl::StatusOr<JobId>)> done);

  // The partition of that name; null when none.
  const PartitionConfig* FindPartition(const std::string& name) const;
  // Whether some node of the job's partition could have its GPU type
  // (gpu_type_census.h); INVALID_ARGUMENT naming the types there if not.
  absl::Status CheckGpuType(const v1::JobRecord& job) const;

 private:
  // Takes the spec by value: Submit moves the request's in (its exported
  // environment is the bulk of it).
  absl::StatusOr<v1::JobRecord> Validate(v1::JobSpec spec) const;
  // A job whose --nodelist, --exclude or --constraint leave too few nodes
  // that could ever hold it: INVALID_ARGUMENT saying what it needs and
  // what there is.
  absl::Status CheckRestrictedJob(const v1::JobRecord& job) const;
  const PartitionConfig& DefaultPartition() const;
  // Applies a partition's limits to a submission (default time, MaxTime,
  // MaxNodes); INVALID_ARGUMENT naming the limit when it is exceeded.
  absl::Status ApplyPartitionLimits(const PartitionConfig& partition,
                                    v1::JobSpec& spec) const;

  Parts parts_;
  int64_t started_ms_ = 0;
  RecentEnvironments recent_environments_;
  // (submitter's uid, submission token) -> the job it made, for live jobs.
  // Keyed by the uid as well: a token is private to its submitter, so
  // another user sending the same one makes a job of their own and can
  // neither find nor re-point this entry.
  std::map<std::pair<uint32_t, std::string>, uint64_t> submission_tokens_;
};

}  // namespace gantry
