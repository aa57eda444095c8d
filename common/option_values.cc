// The values of sbatch-style options (see option_values.h): counts, time
// limits and memory sizes as Slurm writes them.

#include "common/option_values.h"

#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "common/split_view.h"
#include "common/text.h"

namespace gantry {
namespace {

constexpr uint64_t kMaxTimeLimitSeconds = 365ull * 24 * 3600;

constexpr char kTimeFormats[] =
    "expected minutes, minutes:seconds, hours:minutes:seconds, days-hours, "
    "days-hours:minutes, days-hours:minutes:seconds or UNLIMITED";

constexpr char kTooLong[] = "longer than 365 days";

// Parses up to `max_digits` decimal digits (no sign, no spaces); nullopt for
// anything else. max_digits <= 19 keeps the result within uint64_t.
std::optional<uint64_t> ParseDigits(std::string_view text,
                                    std::size_t max_digits) {
  if (!IsDigits(text)) return std::nullopt;
  // Leading zeros do not make a number larger.
  while (text.size() > 1 && text[0] == '0') text.remove_prefix(1);
  if (text.size() > max_digits) return std::nullopt;
  uint64_t value = 0;
  for (char c : text) value = value * 10 + static_cast<uint64_t>(c - '0');
  return value;
}

}  // namespace

absl::StatusOr<uint32_t> ParseCount(std::string_view text, uint32_t max) {
  if (!IsDigits(text)) {
    return absl::InvalidArgumentError("must be a positive integer");
  }
  const std::optional<uint64_t> value = ParseDigits(text, 19);
  if (value.has_value() && *value == 0) {
    return absl::InvalidArgumentError("must be a positive integer");
  }
  if (!value.has_value() || *value > max) {
    return absl::InvalidArgumentError(Concat("must be at most ", max));
  }
  return static_cast<uint32_t>(*value);
}

absl::StatusOr<uint64_t> TimeLimitSeconds(std::string_view text) {
  // Slurm's spellings of "no limit"; "-1" is what `scontrol show` prints.
  if (EqualsIgnoreCase(text, "UNLIMITED") ||
      EqualsIgnoreCase(text, "INFINITE") || text == "-1") {
    return 0;
  }
  std::optional<uint64_t> days;
  std::string_view clock = text;
  if (const std::size_t dash = text.find('-'); dash != std::string_view::npos) {
    const std::string_view days_text = text.substr(0, dash);
    days = ParseDigits(days_text, 9);
    if (!days.has_value()) {
      return absl::InvalidArgumentError(IsDigits(days_text) ? kTooLong
                                                            : kTimeFormats);
    }
    clock = text.substr(dash + 1);
  }
  const std::vector<std::string_view> fields = SplitView(clock, ':');
  if (fields.size() > 3) return absl::InvalidArgumentError(kTimeFormats);
  std::vector<uint64_t> values;
  for (std::string_view field : fields) {
    // Nine digits: large enough for any real limit, small enough that the
    // arithmetic below cannot overflow before the 365-day check.
    const std::optional<uint64_t> value = ParseDigits(field, 9);
    if (!value.has_value()) {
      // A billion of any unit is past the limit; say so, not "bad format".
      return absl::InvalidArgumentError(IsDigits(field) ? kTooLong
                                                        : kTimeFormats);
    }
    values.push_back(*value);
  }
  // Map the fields onto hours, minutes, seconds. The first field is free
  // ("90" minutes, "48:00:00"); the ones after it are clock positions.
  uint64_t hours = 0, minutes = 0, seconds = 0;
  if (days.has_value()) {
    hours = values[0];
    if (values.size() > 1) minutes = values[1];
    if (values.size() > 2) seconds = values[2];
    if (hours >= 24) {
      return absl::InvalidArgumentError("hours must be below 24 after days");
    }
  } else if (values.size() == 1) {
    minutes = values[0];
  } else if (values.size() == 2) {
    minutes = values[0];
    seconds = values[1];
  } else {
    hours = values[0];
    minutes = values[1];
    seconds = values[2];
  }
  const bool minutes_lead = !days.has_value() && values.size() <= 2;
  if (!minutes_lead && minutes >= 60) {
    return absl::InvalidArgumentError("minutes must be below 60");
  }
  if (values.size() >= 2 && seconds >= 60) {
    return absl::InvalidArgumentError("seconds must be below 60");
  }
  const uint64_t total =
      ((days.value_or(0) * 24 + hours) * 60 + minutes) * 60 + seconds;
  if (total > kMaxTimeLimitSeconds) {
    return absl::InvalidArgumentError(kTooLong);
  }
  return total;
}

absl::StatusOr<uint64_t> MemoryMb(std::string_view text) {
  constexpr char kFormat[] =
      "expected a whole number with an optional K, M, G or T suffix";
  uint64_t shift_up = 0;   // multiply by 1024^shift_up
  bool kilobytes = false;  // divide by 1024, rounding up
  if (!text.empty() &&
      !absl::ascii_isdigit(static_cast<unsigned char>(text.back()))) {
    switch (absl::ascii_toupper(static_cast<unsigned char>(text.back()))) {
      case 'K':
        kilobytes = true;
        break;
      case 'M':
        break;
      case 'G':
        shift_up = 1;
        break;
      case 'T':
        shift_up = 2;
        break;
      default:
        return absl::InvalidArgumentError(kFormat);
    }
    text.remove_suffix(1);
  }
  if (!IsDigits(text)) return absl::InvalidArgumentError(kFormat);
  const std::optional<uint64_t> count = ParseDigits(text, 19);
  // Twenty digits of MiB is absurd; report it as too large, not malformed.
  if (!count.has_value()) return absl::InvalidArgumentError("too large");
  if (kilobytes) return *count / 1024 + (*count % 1024 != 0 ? 1 : 0);
  uint64_t mb = *count;
  for (uint64_t i = 0; i < shift_up; ++i) {
    if (mb > UINT64_MAX / 1024) return absl::InvalidArgumentError("too large");
    mb *= 1024;
  }
  return mb;
}

absl::StatusOr<uint64_t> ParseTimeLimit(std::string_view text) {
  absl::StatusOr<uint64_t> seconds = TimeLimitSeconds(text);
  if (!seconds.ok()) {
    return absl::InvalidArgumentError(Concat(
        "invalid time limit ", QuoteForMessage(text, kMaxQuotedOptionChars),
        ": ", StatusMessage(seconds.status())));
  }
  return seconds;
}

std::string FormatTimeLimit(uint64_t seconds) {
  const uint64_t days = seconds / 86400, hours = seconds / 3600 % 24,
                 minutes = seconds / 60 % 60, secs = seconds % 60;
  if (days > 0) {
    return absl::StrFormat("%d-%02d:%02d:%02d", days, hours, minutes, secs);
  }
  if (hours > 0) return absl::StrFormat("%d:%02d:%02d", hours, minutes, secs);
  return absl::StrFormat("%d:%02d", minutes, secs);
}

absl::StatusOr<uint64_t> ParseMemoryMb(std::string_view text) {
  absl::StatusOr<uint64_t> mb = MemoryMb(text);
  if (!mb.ok()) {
    return absl::InvalidArgumentError(Concat(
        "invalid memory size ", QuoteForMessage(text, kMaxQuotedOptionChars),
        ": ", StatusMessage(mb.status())));
  }
  return mb;
}

}  // namespace gantry
