#include "cli/slurm/sacct_time.h"

#include <ctime>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/text.h"

namespace gantry::cli {
namespace {

constexpr char kTimeForms[] =
    "now[-N[seconds|minutes|hours|days|weeks]], HH:MM[:SS][AM|PM], "
    "MMDD[YY][-HH:MM[:SS]], MM/DD[/YY][-HH:MM[:SS]], "
    "YYYY-MM-DD[THH:MM[:SS]], today, midnight, noon, fika, teatime";

absl::Status BadTime(std::string_view text) {
  return absl::InvalidArgumentError(
      absl::StrCat("invalid time \"", AsAbsl(text.substr(0, 60)),
                   "\" (valid: ", kTimeForms, ")"));
}

bool Digits(std::string_view text, size_t count, int& value) {
  if (text.size() != count) return false;
  value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  return true;
}

// "HH:MM[:SS]" -> seconds into the day.
bool ParseClock(std::string_view text, int& seconds) {
  std::vector<std::string_view> parts;
  for (absl::string_view part : absl::StrSplit(AsAbsl(text), ':')) {
    parts.push_back(AsStd(part));
  }
  if (parts.size() < 2 || parts.size() > 3) return false;
  int h = 0, m = 0, s = 0;
  if (!Digits(parts[0], parts[0].size() == 1 ? 1 : 2, h) ||
      !Digits(parts[1], 2, m) ||
      (parts.size() == 3 && !Digits(parts[2], 2, s))) {
    return false;
  }
  if (h > 23 || m > 59 || s > 60) return false;
  seconds = h * 3600 + m * 60 + s;
  return true;
}

// Local midnight of the day of `when`, shifted by `days`.
int64_t LocalTime(int64_t when, int year, int month, int day, int seconds) {
  const time_t now = static_cast<time_t>(when);
  std::tm tm{};
  localtime_r(&now, &tm);
  if (year >= 0) tm.tm_year = year - 1900;
  if (month >= 0) tm.tm_mon = month - 1;
  if (day >= 0) tm.tm_mday = day;
  tm.tm_hour = seconds / 3600;
  tm.tm_min = seconds / 60 % 60;
  tm.tm_sec = seconds % 60;
  tm.tm_isdst = -1;
  return static_cast<int64_t>(mktime(&tm));
}

int64_t TodayAt(int64_t now, int seconds) {
  return LocalTime(now, -1, -1, -1, seconds);
}

// A clock time still to come today means yesterday's (a time in the past).
int64_t PastClock(int64_t now, int seconds) {
  const int64_t today = TodayAt(now, seconds);
  if (today <= now) return today;
  const int64_t yesterday = now - 24 * 3600;
  return LocalTime(yesterday, -1, -1, -1, seconds);
}

int CurrentYear(int64_t now) {
  const time_t t = static_cast<time_t>(now);
  std::tm tm{};
  localtime_r(&t, &tm);
  return tm.tm_year + 1900;
}

absl::StatusOr<int64_t> Relative(std::string_view text, int64_t now) {
  // text starts after "now": "", "-1hour", "+30", "-2days"
  if (text.empty()) return now;
  const int sign = text[0] == '-' ? -1 : 1;
  text.remove_prefix(1);
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9')
    ++digits;
  int64_t count = 0;
  if (digits == 0 || digits > 9 ||
      !absl::SimpleAtoi(AsAbsl(text.substr(0, digits)), &count)) {
    return absl::InvalidArgumentError("");
  }
  std::string unit = absl::AsciiStrToLower(AsAbsl(text.substr(digits)));
  int64_t scale = 0;
  for (const auto& [names, seconds] :
       std::vector<std::pair<std::vector<std::string>, int64_t>>{
           {{"", "s", "sec", "secs", "second", "seconds"}, 1},
           {{"m", "min", "mins", "minute", "minutes"}, 60},
           {{"h", "hour", "hours"}, 3600},
           {{"d", "day", "days"}, 86400},
           {{"w", "week", "weeks"}, 7 * 86400}}) {
    for (const std::string& name : names) {
      if (unit == name) scale = seconds;
    }
  }
  if (scale == 0) return absl::InvalidArgumentError("");
  return now + sign * count * scale;
}

// "MMDD[YY]", "MM.DD[.YY]", "MM/DD[/YY]" (no time part).
bool ParseMonthDay(std::string_view text, int& month, int& day, int& year) {
  year = -1;
  std::vector<std::string_view> parts;
  const char separator = text.find('/') != std::string_view::npos   ? '/'
                         : text.find('.') != std::string_view::npos ? '.'
                                                                    : 0;
  if (separator != 0) {
    for (absl::string_view part : absl::StrSplit(AsAbsl(text), separator)) {
      parts.push_back(AsStd(part));
    }
  } else {
    if (text.size() != 4 && text.size() != 6) return false;
    parts = {text.substr(0, 2), text.substr(2, 2)};
    if (text.size() == 6) parts.push_back(text.substr(4, 2));
  }
  if (parts.size() < 2 || parts.size() > 3) return false;
  if (!Digits(parts[0], 2, month) || !Digits(parts[1], 2, day)) return false;
  if (parts.size() == 3) {
    int yy = 0;
    if (!Digits(parts[2], 2, yy)) return false;
    year = 2000 + yy;
  }
  return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

}  // namespace

absl::StatusOr<int64_t> ParseSacctTime(std::string_view text, int64_t now) {
  const std::string lower = absl::AsciiStrToLower(AsAbsl(text));
  if (lower.rfind("now", 0) == 0) {
    absl::StatusOr<int64_t> when =
        Relative(std::string_view(lower).substr(3), now);
    if (!when.ok()) return BadTime(text);
    return when;
  }
  if (lower == "today" || lower == "midnight") return TodayAt(now, 0);
  if (lower == "noon") return PastClock(now, 12 * 3600);
  if (lower == "fika") return PastClock(now, 15 * 3600);
  if (lower == "teatime") return PastClock(now, 16 * 3600);
  // Seconds since the epoch (a long plain number).
  if (lower.size() >= 9 &&
      lower.find_first_not_of("0123456789") == std::string::npos) {
    int64_t seconds = 0;
    if (absl::SimpleAtoi(lower, &seconds)) return seconds;
  }
  // YYYY-MM-DD[THH:MM[:SS]]
  if (lower.size() >= 10 && lower[4] == '-' && lower[7] == '-') {
    int year = 0, month = 0, day = 0, seconds = 0;
    if (!Digits(std::string_view(lower).substr(0, 4), 4, year) ||
        !Digits(std::string_view(lower).substr(5, 2), 2, month) ||
        !Digits(std::string_view(lower).substr(8, 2), 2, day) || month < 1 ||
        month > 12 || day < 1 || day > 31) {
      return BadTime(text);
    }
    if (lower.size() > 10 &&
        (lower[10] != 't' ||
         !ParseClock(std::string_view(lower).substr(11), seconds))) {
      return BadTime(text);
    }
    return LocalTime(now, year, month, day, seconds);
  }
  // HH:MM[:SS][AM|PM]
  if (lower.find(':') != std::string::npos &&
      lower.find('-') == std::string::npos) {
    std::string_view clock = lower;
    int offset = -1;
    if (clock.size() > 2 && (clock.substr(clock.size() - 2) == "am" ||
                             clock.substr(clock.size() - 2) == "pm")) {
      offset = clock.substr(clock.size() - 2) == "pm" ? 12 * 3600 : 0;
      clock.remove_suffix(2);
    }
    int seconds = 0;
    if (!ParseClock(clock, seconds)) return BadTime(text);
    if (offset >= 0) {
      if (seconds >= 13 * 3600 || seconds < 3600) return BadTime(text);
      seconds = seconds % (12 * 3600) + offset;
    }
    return PastClock(now, seconds);
  }
  // MMDD[YY][-HH:MM[:SS]] and the dotted and slashed forms.
  std::string_view date = lower;
  int seconds = 0;
  if (const size_t dash = date.find('-'); dash != std::string_view::npos) {
    if (!ParseClock(date.substr(dash + 1), seconds)) return BadTime(text);
    date = date.substr(0, dash);
  }
  int month = 0, day = 0, year = 0;
  if (!ParseMonthDay(date, month, day, year)) return BadTime(text);
  if (year >= 0) return LocalTime(now, year, month, day, seconds);
  const int64_t this_year =
      LocalTime(now, CurrentYear(now), month, day, seconds);
  if (this_year <= now) return this_year;
  return LocalTime(now, CurrentYear(now) - 1, month, day, seconds);
}

absl::StatusOr<SacctStates> ParseSacctStates(std::string_view list) {
  struct Name {
    const char* longer;
    const char* shorter;
    v1::JobState state;  // JOB_STATE_UNSPECIFIED: never a Gantry state
  };
  static const Name kNames[] = {
      {"CANCELLED", "CA", v1::CANCELLED},
      {"COMPLETED", "CD", v1::COMPLETED},
      {"FAILED", "F", v1::FAILED},
      {"NODE_FAIL", "NF", v1::NODE_FAIL},
      {"OUT_OF_MEMORY", "OOM", v1::OUT_OF_MEMORY},
      {"PENDING", "PD", v1::PENDING},
      {"RUNNING", "R", v1::RUNNING},
      {"TIMEOUT", "TO", v1::TIMEOUT},
      {"BOOT_FAIL", "BF", v1::JOB_STATE_UNSPECIFIED},
      {"DEADLINE", "DL", v1::DEADLINE},
      {"PREEMPTED", "PR", v1::JOB_STATE_UNSPECIFIED},
      {"REQUEUED", "RQ", v1::JOB_STATE_UNSPECIFIED},
      {"RESIZING", "RS", v1::JOB_STATE_UNSPECIFIED},
      {"REVOKED", "RV", v1::JOB_STATE_UNSPECIFIED},
      {"SUSPENDED", "S", v1::JOB_STATE_UNSPECIFIED},
  };
  SacctStates result;
  for (absl::string_view item :
       absl::StrSplit(AsAbsl(list), ',', absl::SkipEmpty())) {
    const std::string upper = absl::AsciiStrToUpper(item);
    const Name* found = nullptr;
    for (const Name& name : kNames) {
      if (upper == name.longer || upper == name.shorter) found = &name;
    }
    if (found == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "invalid state \"", item.substr(0, 40),
          "\" (valid: CA, CD, F, NF, OOM, PD, R, TO, BF, DL, PR, RQ, RS, RV, "
          "S, or their long names)"));
    }
    result.given = true;
    if (found->state != v1::JOB_STATE_UNSPECIFIED) {
      result.states.insert(found->state);
    }
  }
  if (!result.given) {
    return absl::InvalidArgumentError("no state given (e.g. -s CD,F)");
  }
  return result;
}

absl::StatusOr<std::vector<SacctJobId>> ParseSacctJobIds(
    std::string_view list) {
  std::vector<SacctJobId> ids;
  for (absl::string_view piece :
       absl::StrSplit(AsAbsl(list), ',', absl::SkipEmpty())) {
    const std::string_view item = AsStd(piece);
    auto bad = [&] {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid job id \"", AsAbsl(item.substr(0, 40)),
                       "\" (valid: ID, ID_TASK, ID.batch, ID.STEP)"));
    };
    SacctJobId id;
    std::string_view job = item;
    if (const size_t dot = job.find('.'); dot != std::string_view::npos) {
      id.step = std::string(job.substr(dot + 1));
      job = job.substr(0, dot);
      uint32_t number = 0;
      if (id.step != "batch" && id.step != "extern" &&
          !absl::SimpleAtoi(AsAbsl(id.step), &number)) {
        return bad();
      }
    }
    if (const size_t underscore = job.find('_');
        underscore != std::string_view::npos) {
      uint32_t task = 0;
      if (!absl::SimpleAtoi(AsAbsl(job.substr(underscore + 1)), &task))
        return bad();
      id.array_task = task;
      job = job.substr(0, underscore);
    }
    if (!absl::SimpleAtoi(AsAbsl(job), &id.job_id) || id.job_id == 0)
      return bad();
    ids.push_back(std::move(id));
  }
  if (ids.empty()) {
    return absl::InvalidArgumentError("no job id given (e.g. -j 12,13_2)");
  }
  return ids;
}

SacctWindow DefaultSacctWindow(bool jobs_given, bool states_given,
                               std::optional<int64_t> start,
                               std::optional<int64_t> end, int64_t now) {
  SacctWindow window;
  if (start) {
    window.start = *start;
  } else if (jobs_given) {
    window.start = 0;
  } else if (states_given) {
    window.start = now;
  } else {
    window.start = TodayAt(now, 0);
  }
  if (end) {
    window.end = *end;
  } else if (states_given && start) {
    window.end = *start;
  } else {
    window.end = now;
  }
  return window;
}

}  // namespace gantry::cli
