// Which jobs a listing, cancel or hold selects (v1::JobFilter), and what of
// a job every user may see (a listing's summary).
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gantry/v1/client.pb.h"
#include "gantry/v1/types.pb.h"

namespace gantry {

// Whether `job` is the job the selector names: "ID" is the job ID or any
// task of array ID, "ID_TASK" the task TASK of array ID.
bool MatchesSelector(const v1::JobSelector& selector, const v1::JobRecord& job);

// Whether `job` matches one entry of each non-empty list of `filter`.
bool MatchesFilter(const v1::JobFilter& filter, const v1::JobRecord& job);

// Whether the filter narrows by users, names, states or partitions (scancel
// -u/-n/-t), as opposed to naming jobs only.
bool FiltersByAttributes(const v1::JobFilter& filter);

// INVALID_ARGUMENT naming the limit when the filter has more entries than
// a command line could give (kMaxFilterEntries in all).
absl::Status CheckFilter(const v1::JobFilter& filter);

// A listing's page token (the last job id of the previous page); 0 for
// none. INVALID_ARGUMENT for anything but a number.
absl::StatusOr<uint64_t> ParsePageToken(const std::string& token);

// Whether the job was eligible to run or running at some time in
// [start_ms, end_ms] (0: open on that side), as sacct -S/-E select: from
// its submission (or --begin, if later) to its end, or on through `now_ms`
// while it has not ended.
bool ActiveInWindow(const v1::JobRecord& job, int64_t start_ms, int64_t end_ms,
                    int64_t now_ms);

// Clears what the job's user gave it to run (the script, its arguments, the
// environment, step command lines, the token of a step's output): shown
// only to its owner and admins, and never in listings.
void ClearPayloads(v1::JobRecord& job);
// The submission's part of that: the script, its arguments, the
// environment (what accounting and listings never carry).
void ClearSubmittedPayload(v1::JobSpec& spec);

// Clears what only the job's owner (and admins) may know of it besides its
// payloads: the submission token (whoever knows it could learn which job a
// submission made) and its datasets' names and paths, with their staging
// on the nodes (docs/user-guide.md: a user's datasets are private).
void ClearPrivateToOwner(v1::JobRecord& job);

}  // namespace gantry
