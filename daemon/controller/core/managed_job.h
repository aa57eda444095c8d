// Finding the jobs a user's request names, and whether the caller may act
// on them: its owner or an admin. Shared by every request that changes a
// job (cancel, hold, requeue, update, steps, allocations, progress).
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/controller/core/caller.h"
#include "daemon/controller/core/cluster_state.h"
#include "gantry/v1/client.pb.h"

namespace gantry {

// The job, if `caller` may act on it; NOT_FOUND or PERMISSION_DENIED
// saying so otherwise.
absl::StatusOr<JobRuntime*> ManagedJob(ClusterState& state, uint64_t job_id,
                                       const Caller& caller);
// ManagedJob for one entry of a per-job answer (cancel, hold): null, with
// `result` saying why, when the caller may not act on it.
JobRuntime* ManagedJobFor(ClusterState& state, uint64_t job_id,
                          const Caller& caller, v1::CancelResult& result);
// The jobs a cancel or hold names: `job_ids` as given, then those of its
// filter (CancelRequest.filter, checked with CheckFilter by the caller),
// in order, each once; an ID_TASK naming no job gets a failed result in
// `unknown`.
std::vector<uint64_t> ResolveTargets(
    const ClusterState& state,
    const google::protobuf::RepeatedField<uint64_t>& job_ids,
    const v1::JobFilter& filter,
    google::protobuf::RepeatedPtrField<v1::CancelResult>& unknown);

}  // namespace gantry
