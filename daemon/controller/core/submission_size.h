// What one submission makes gantryd store, in bytes, and the limits on it.
//
// Every task of a job stores its own JobRecord (script, arguments, name,
// paths, node lists, ...); the exported environment is stored once per
// submission (StateStore::Environment). A submission is refused when one
// task's share or the whole of it is above its limit, before anything is
// stored, with an error naming the limit. The gRPC server's receive limit
// (kMaxClientRequestBytes) is set so that any acceptable submission fits in
// one request and a larger request is refused by gRPC before it is
// allocated.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "common/request_limits.h"
#include "gantry/v1/types.pb.h"

namespace gantry {

// Script arguments: exec(2) refuses argument lists above ARG_MAX (2 MiB
// with Linux's default 8 MiB stack), so more could never run anyway.
inline constexpr uint64_t kMaxScriptArgsBytes = 2ull << 20;
// One task's record: a 4 MiB script (the script limit), 2 MiB of
// arguments and 2 MiB for the rest (names, paths, --nodelist of a
// 100,000-node job).
inline constexpr uint64_t kMaxTaskStoredBytes = 8ull << 20;
// One submission, all its tasks together plus the environment: 10,000
// array tasks of a 6 KiB script fit. Everything a submission stores goes
// into one synced write that other requests wait behind, so this also
// bounds how long one user can stall everyone (about 0.5 s at 128 MiB/s).
inline constexpr uint64_t kMaxSubmissionStoredBytes = 64ull << 20;
// The largest request gantryd reads from a client (and the largest
// SubmitStream message): one task at its limit, a 1 MiB environment
// (ValidateSubmission's limit) and headroom, rounded up.
// (common/request_limits.h, shared with the CLI's own check.)
static_assert(kMaxTaskStoredBytes + (1ull << 20) + (64ull << 10) <=
                  limits::kMaxClientRequestBytes,
              "an acceptable submission must fit in one request");

struct SubmissionSize {
  uint64_t script_args = 0;  // the script arguments, per task
  uint64_t per_task = 0;     // one task's record (environment excluded)
  uint64_t environment = 0;  // stored once for the submission
  uint64_t tasks = 1;
  // per_task * tasks + environment.
  uint64_t total() const { return per_task * tasks + environment; }
};

// The bytes `spec` makes gantryd store for each of `tasks` tasks (1 for a
// job that is not an array).
SubmissionSize MeasureSubmission(const v1::JobSpec& spec, uint64_t tasks);

// OK, or INVALID_ARGUMENT naming the limit that `size` is above.
absl::Status CheckSubmissionSize(const SubmissionSize& size);

}  // namespace gantry
