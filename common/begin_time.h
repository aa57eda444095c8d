// sbatch --begin: when a job becomes eligible to start. Pure (local time
// from the C library's time zone); thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"

namespace gantry {

// `text` at `now` (seconds since the epoch) -> seconds since the epoch.
// Slurm's forms: "now", "now+N" with an optional unit (seconds, minutes,
// hours, days, weeks; default seconds), "HH:MM[:SS]" (today, or tomorrow
// once passed), "YYYY-MM-DD[THH:MM[:SS]]", "midnight", "noon", "teatime"
// (16:00), "today", "tomorrow". INVALID_ARGUMENT saying what is accepted
// otherwise.
absl::StatusOr<int64_t> ParseBeginTime(std::string_view text, int64_t now);

}  // namespace gantry
