// Field-by-field checks of what clients send gantryd, applied before
// anything is stored or acted on: every string that others will see
// (`gantry queue`, `gantry job`, `gantry nodes`, logs) is free of control
// characters, well-formed UTF-8 and of bounded length; every number is
// within a range where the arithmetic done on it (seconds * 1000 into
// int64, memory per node * nodes, tasks * CPUs) cannot overflow.
//
// These complement the semantic checks of the controller (partitions,
// dependencies on existing jobs, what nodes can hold), which run after
// them. Errors are INVALID_ARGUMENT naming the field (as the proto and the
// command-line option call it) and the limit.
//
// Pure functions over the request messages, thread-safe: the gRPC services
// call them on their own threads before posting a request to the loop.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "common/request_limits.h"
#include "gantry/v1/client.pb.h"
#include "gantry/v1/dataset_cache.pb.h"
#include "gantry/v1/types.pb.h"

namespace gantry {

// Limits of JobSpec fields that the controller's ValidateSubmission does
// not bound itself.
inline constexpr uint32_t kMaxSwitches = 100'000;
inline constexpr size_t kMaxDependencyBytes = 64 << 10;
inline constexpr size_t kMaxConstraintBytes = 1024;
inline constexpr size_t kMaxArrayBytes = 8192;
inline constexpr size_t kMaxTokenBytes = 256;

// A node name an agent may register with (also a safe log and path token).
bool ValidNodeName(const std::string& name);

absl::Status ValidateJobSpecFields(const v1::JobSpec& spec);
// The user name a caller claims (used only with --auth=none).
absl::Status ValidateClaimedUser(std::string_view user);
absl::Status ValidateReportProgressRequest(
    const v1::ReportProgressRequest& request);
absl::Status ValidateDrainRequest(const v1::DrainRequest& request);
absl::Status ValidateImportTopologyRequest(
    const v1::ImportTopologyRequest& request);
// The step's argv is shown by `gantry job` but may hold any byte a command
// line can (newlines in `bash -c`): only NUL, which no exec can pass, is
// refused, and the CLI escapes the rest when printing.
absl::Status ValidateLaunchStepRequestFields(
    const v1::LaunchStepRequest& request);
// `gantry cache`: node lists of at most kMaxCacheRequestNodes names, a
// dataset NAME and PATH as --dataset takes them (common/dataset_spec.h),
// a wait of at most kMaxCacheWaitSeconds. A prefetch names its nodes.
using limits::kMaxCacheRequestNodes;
inline constexpr uint32_t kMaxCacheWaitSeconds = 7 * 24 * 3600;
absl::Status ValidateListDatasetCacheRequest(
    const v1::ListDatasetCacheRequest& request);
absl::Status ValidatePrefetchDatasetRequest(
    const v1::PrefetchDatasetRequest& request);
absl::Status ValidateEvictDatasetRequest(
    const v1::EvictDatasetRequest& request);

}  // namespace gantry
