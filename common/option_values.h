// Parsers of the values that sbatch-style options take, in Slurm's spelling:
// counts ("4"), time limits ("2-12:00:00") and memory sizes ("16G"). The
// option table (job_options.h) applies them to a JobRequest; the controller
// and the CLI use the time and memory ones for configuration and output.
//
// Two kinds of error: ParseTimeLimit and ParseMemoryMb name the value
// ("invalid time limit \"1:99\": seconds must be below 60"); ParseCount,
// TimeLimitSeconds and MemoryMb give the bare reason ("seconds must be
// below 60") for a caller that says itself which value is wrong.
//
// Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gantry {

// Values are quoted in error messages up to this many characters: a
// pathological one must not produce a megabyte-long, multi-line message.
inline constexpr std::size_t kMaxQuotedOptionChars = 80;

// The most memory a job may ask for on one node: 1 PiB, which also keeps
// MiB * 1024 arithmetic far from overflow.
inline constexpr uint64_t kMaxMemoryPerNodeMb = 1ull << 30;

// A positive count of at most `max` (no sign, no spaces; leading zeros are
// allowed). INVALID_ARGUMENT with the bare reason: "must be a positive
// integer" or "must be at most MAX".
absl::StatusOr<uint32_t> ParseCount(std::string_view text, uint32_t max);

// Slurm time formats: "M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S", and
// "UNLIMITED"/"INFINITE"/"-1" (returned as 0). Result in seconds, at most
// 365 days. INVALID_ARGUMENT with the bare reason.
absl::StatusOr<uint64_t> TimeLimitSeconds(std::string_view text);

// Slurm memory sizes: a count with an optional K, M, G or T suffix (default
// M). Result in MiB, rounded up. "0" is allowed (means "all of the node").
// INVALID_ARGUMENT with the bare reason.
absl::StatusOr<uint64_t> MemoryMb(std::string_view text);

// TimeLimitSeconds with errors that quote the value.
absl::StatusOr<uint64_t> ParseTimeLimit(std::string_view text);

// The other way: "M:SS", "H:MM:SS" or "D-HH:MM:SS", as Slurm prints times.
std::string FormatTimeLimit(uint64_t seconds);

// MemoryMb with errors that quote the value.
absl::StatusOr<uint64_t> ParseMemoryMb(std::string_view text);

}  // namespace gantry
