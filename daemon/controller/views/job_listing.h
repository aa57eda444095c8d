// squeue's and `gantry queue`'s page of job summaries, from the live state.
#pragma once

#include "absl/status/statusor.h"
#include "daemon/controller/core/caller.h"
#include "daemon/controller/core/cluster_state.h"
#include "gantry/v1/client.pb.h"

namespace gantry {

// One page of summaries (job_summary.h: no payloads; the submission token
// and datasets only on `caller`'s own jobs, or all for an admin), each
// with its priority and expected start. Without request.all only live
// jobs. INVALID_ARGUMENT for a bad page token or an outsized filter.
absl::StatusOr<v1::ListJobsResponse> ListJobs(
    const ClusterState& state, const v1::ListJobsRequest& request,
    const Caller& caller);

}  // namespace gantry
