// scontrol show job's and `gantry job`'s one job, live or from the history,
// with its events.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "daemon/controller/core/caller.h"
#include "daemon/controller/core/cluster_state.h"
#include "daemon/controller/core/commit_pipeline.h"
#include "daemon/controller/core/controller_feature.h"
#include "daemon/controller/core/job_retention.h"
#include "daemon/store/state_store.h"
#include "gantry/v1/client.pb.h"

namespace gantry {

// Where a job's view is read from. The store is only read (its events).
struct JobViewSources {
  const ClusterState& state;
  const JobRetention& retention;  // jobs that left the live state
  const CommitPipeline& commits;  // events not yet written
  const FeatureList& features;    // each adds its part (FillJob)
  StateStore& store;
};

// A job from the live state or, once it has left it, from the history,
// with its goodput split as of `now_ms` and its events in order. The
// script, its arguments, step command lines, the submission token and the
// datasets only for the job's owner and admins; the environment never.
// NOT_FOUND when it is in neither.
absl::StatusOr<v1::GetJobResponse> ViewJob(const JobViewSources& sources,
                                           const v1::GetJobRequest& request,
                                           const Caller& caller,
                                           int64_t now_ms);

}  // namespace gantry
