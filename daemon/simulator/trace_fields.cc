// The cell parsers the trace formats share (trace_format.h) and the public
// timestamp parser (trace_reader.h). Pure functions; thread-safe.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "daemon/simulator/trace_format.h"
#include "daemon/simulator/trace_reader.h"

namespace gantry::sim {
namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
// days_from_civil algorithm).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

}  // namespace

bool ParseTimestampMs(std::string_view text, int64_t* ms) {
  // YYYY-MM-DD HH:MM:SS, digits exactly where expected.
  if (text.size() != 19 || text[4] != '-' || text[7] != '-' ||
      text[10] != ' ' || text[13] != ':' || text[16] != ':') {
    return false;
  }
  auto number = [&](std::size_t at, std::size_t len, int* out) {
    int value = 0;
    for (std::size_t i = at; i < at + len; ++i) {
      if (text[i] < '0' || text[i] > '9') return false;
      value = value * 10 + (text[i] - '0');
    }
    *out = value;
    return true;
  };
  int year, month, day, hour, minute, second;
  if (!number(0, 4, &year) || !number(5, 2, &month) || !number(8, 2, &day) ||
      !number(11, 2, &hour) || !number(14, 2, &minute) ||
      !number(17, 2, &second)) {
    return false;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 ||
      minute > 59 || second > 60) {
    return false;
  }
  const int64_t days = DaysFromCivil(year, static_cast<unsigned>(month),
                                     static_cast<unsigned>(day));
  *ms = ((days * 24 + hour) * 60 + minute) * 60'000LL + second * 1000LL;
  return true;
}

namespace trace_format {

int Find(const std::vector<std::string_view>& header, std::string_view name) {
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  return -1;
}

Columns ColumnsFrom(const std::vector<std::string_view>& header,
                    std::initializer_list<ColumnName> names) {
  Columns columns;
  columns.count = header.size();
  columns.complete = true;
  for (const ColumnName& column : names) {
    columns.*column.field = Find(header, column.name);
    if (column.required && columns.*column.field < 0) columns.complete = false;
  }
  return columns;
}

bool ParseSecondsMs(std::string_view text, int64_t* ms) {
  double seconds = 0;
  if (!ParseNumber(text, &seconds) || !std::isfinite(seconds) || seconds < 0 ||
      seconds > 1e12) {
    return false;
  }
  *ms = static_cast<int64_t>(std::llround(seconds * 1000.0));
  return true;
}

bool ParseWholeCount(std::string_view text, uint64_t* value) {
  double number = 0;
  if (!ParseNumber(text, &number) || !std::isfinite(number) || number < 0 ||
      number > static_cast<double>(kMaxGpusPerJob) ||
      number != std::floor(number)) {
    return false;
  }
  *value = static_cast<uint64_t>(number);
  return true;
}

std::string Bad(std::string_view what, std::string_view text) {
  return absl::StrCat("bad ", std::string(what), " \"", std::string(text),
                      "\"");
}

std::string EndsBeforeStart(std::string_view start, std::string_view end) {
  return absl::StrCat("ends (", std::string(end), ") before it starts (",
                      std::string(start), ")");
}

}  // namespace trace_format
}  // namespace gantry::sim
