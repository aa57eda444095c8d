#include "common/begin_time.h"

#include <ctime>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace gantry {
namespace {

constexpr char kForms[] =
    "expected now[+N[seconds|minutes|hours|days|weeks]], HH:MM[:SS], "
    "YYYY-MM-DD[THH:MM[:SS]], midnight, noon, teatime, today or tomorrow";

absl::Status Bad(std::string_view text) {
  return absl::InvalidArgumentError(
      absl::StrCat("bad begin time '", std::string(text), "': ", kForms));
}

// "HH:MM[:SS]" -> hour, minute, second.
bool ParseClock(const std::string& text, int& hour, int& minute, int& second) {
  hour = minute = second = 0;
  char trailing = 0;
  const int fields = std::sscanf(text.c_str(), "%d:%d:%d%c", &hour, &minute,
                                 &second, &trailing);
  if (fields != 2 && fields != 3) return false;
  if (fields == 2 && text.find(':') != text.rfind(':')) return false;
  return hour >= 0 && hour < 24 && minute >= 0 && minute < 60 && second >= 0 &&
         second < 60;
}

// The local time today (days_ahead = 0) or later at hour:minute:second.
int64_t LocalAt(int64_t now, int days_ahead, int hour, int minute, int second) {
  const std::time_t now_t = static_cast<std::time_t>(now);
  std::tm local{};
  localtime_r(&now_t, &local);
  local.tm_mday += days_ahead;
  local.tm_hour = hour;
  local.tm_min = minute;
  local.tm_sec = second;
  local.tm_isdst = -1;
  return static_cast<int64_t>(std::mktime(&local));
}

}  // namespace

absl::StatusOr<int64_t> ParseBeginTime(std::string_view raw, int64_t now) {
  const std::string text = absl::AsciiStrToLower(std::string(raw));
  if (text.empty() || text.size() > 64) return Bad(raw);
  if (text == "now") return now;
  if (text.rfind("now+", 0) == 0) {
    std::string count_text = text.substr(4);
    size_t digits = 0;
    while (
        digits < count_text.size() &&
        absl::ascii_isdigit(static_cast<unsigned char>(count_text[digits]))) {
      ++digits;
    }
    int64_t count = 0;
    if (digits == 0 || digits > 9 ||
        !absl::SimpleAtoi(count_text.substr(0, digits), &count)) {
      return Bad(raw);
    }
    const std::string unit = count_text.substr(digits);
    int64_t scale = 0;
    if (unit.empty() || unit == "s" || unit == "second" || unit == "seconds") {
      scale = 1;
    } else if (unit == "m" || unit == "minute" || unit == "minutes") {
      scale = 60;
    } else if (unit == "h" || unit == "hour" || unit == "hours") {
      scale = 3600;
    } else if (unit == "d" || unit == "day" || unit == "days") {
      scale = 86400;
    } else if (unit == "w" || unit == "week" || unit == "weeks") {
      scale = 7 * 86400;
    } else {
      return Bad(raw);
    }
    return now + count * scale;
  }
  if (text == "today") return LocalAt(now, 0, 0, 0, 0);
  if (text == "tomorrow" || text == "midnight") {
    return LocalAt(now, 1, 0, 0, 0);
  }
  const struct {
    const char* name;
    int hour;
  } kNamed[] = {{"noon", 12}, {"teatime", 16}};
  for (const auto& named : kNamed) {
    if (text == named.name) {
      const int64_t today = LocalAt(now, 0, named.hour, 0, 0);
      return today > now ? today : LocalAt(now, 1, named.hour, 0, 0);
    }
  }
  int hour = 0, minute = 0, second = 0;
  if (ParseClock(text, hour, minute, second)) {
    const int64_t today = LocalAt(now, 0, hour, minute, second);
    return today > now ? today : LocalAt(now, 1, hour, minute, second);
  }
  // YYYY-MM-DD[THH:MM[:SS]]
  hour = minute = second = 0;
  int year = 0, month = 0, day = 0;
  char trailing = 0;
  const std::string date = text.substr(0, text.find('t'));
  if (std::sscanf(date.c_str(), "%4d-%2d-%2d%c", &year, &month, &day,
                  &trailing) != 3 ||
      date.size() != 10 || month < 1 || month > 12 || day < 1 || day > 31 ||
      year < 1970 || year > 9999) {
    return Bad(raw);
  }
  if (text.size() > 10) {
    if (text[10] != 't' || !ParseClock(text.substr(11), hour, minute, second)) {
      return Bad(raw);
    }
  }
  std::tm local{};
  local.tm_year = year - 1900;
  local.tm_mon = month - 1;
  local.tm_mday = day;
  local.tm_hour = hour;
  local.tm_min = minute;
  local.tm_sec = second;
  local.tm_isdst = -1;
  const int64_t at = static_cast<int64_t>(std::mktime(&local));
  if (local.tm_mday != day) return Bad(raw);  // 2026-02-31 rolled over
  return at;
}

}  // namespace gantry
