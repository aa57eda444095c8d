// sacct's selection words: times (-S/-E), state lists (-s), job lists (-j)
// and the default time window those options imply (man sacct, DEFAULT TIME
// WINDOW). Also used by sreport for start=/end=.
//
// Pure (local time from the C library's time zone); thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "gantry/v1/types.pb.h"

namespace gantry::cli {

// `text` at `now` (seconds since the epoch) -> seconds since the epoch, in
// Slurm's forms for a time in the past: "now", "now-N[unit]" and
// "now+N[unit]" (seconds, minutes, hours, days, weeks; default seconds),
// "HH:MM[:SS][AM|PM]" (today, or yesterday if that is still to come),
// "MMDD[YY][-HH:MM[:SS]]", "MM.DD[.YY][-HH:MM[:SS]]",
// "MM/DD[/YY][-HH:MM[:SS]]" (this year, or last year if still to come),
// "YYYY-MM-DD[THH:MM[:SS]]", "today"/"midnight" (00:00 today), "noon",
// "fika" (15:00), "teatime" (16:00), and a plain number of seconds since
// the epoch. INVALID_ARGUMENT saying what is accepted otherwise.
absl::StatusOr<int64_t> ParseSacctTime(std::string_view text, int64_t now);

// "CD,F,ca,running" -> the Gantry states; case does not matter, long and
// short names (CA CANCELLED, CD COMPLETED, F FAILED, NF NODE_FAIL, OOM
// OUT_OF_MEMORY, PD PENDING, R RUNNING, TO TIMEOUT). Slurm states no
// Gantry job is ever in (BF BOOT_FAIL, DL DEADLINE, PR PREEMPTED, RQ
// REQUEUED, RS RESIZING, RV REVOKED, S SUSPENDED) are accepted and match
// nothing. INVALID_ARGUMENT names an unknown one.
struct SacctStates {
  std::set<v1::JobState> states;
  bool given = false;  // some state was named (even one that never matches)
};
absl::StatusOr<SacctStates> ParseSacctStates(std::string_view list);

// One entry of -j: "ID", "ID_TASK", each optionally ".STEP" (batch,
// extern, or a step number).
struct SacctJobId {
  uint64_t job_id = 0;
  std::optional<uint32_t> array_task;
  std::string step;  // empty: the job and all its steps
};
absl::StatusOr<std::vector<SacctJobId>> ParseSacctJobIds(std::string_view list);

// The window sacct searches, in seconds since the epoch (man sacct,
// DEFAULT TIME WINDOW): -S defaults to midnight today, to the epoch with
// -j, to now with -s (without -j); -E to now, or to -S with -s.
struct SacctWindow {
  int64_t start = 0;
  int64_t end = 0;
};
SacctWindow DefaultSacctWindow(bool jobs_given, bool states_given,
                               std::optional<int64_t> start,
                               std::optional<int64_t> end, int64_t now);

}  // namespace gantry::cli
