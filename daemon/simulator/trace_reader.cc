#include "daemon/simulator/trace_reader.h"

#include <charconv>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/split_view.h"
#include "common/text.h"
#include "common/text_file.h"

namespace gantry::sim {
namespace {

// What is trimmed around lines and cells: blanks and line ends, not the
// rest of ASCII white space (\v, \f), which stays part of the text.
constexpr std::string_view kBlanks = " \t\r\n";

std::vector<std::string_view> SplitRow(std::string_view line) {
  std::vector<std::string_view> cells = SplitView(line, ',');
  for (auto& cell : cells) cell = TrimChars(cell, kBlanks);
  return cells;
}

template <typename T>
bool ParseNumber(std::string_view text, T* value) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *value);
  return ec == std::errc() && ptr == end && !text.empty();
}

// Where each needed column sits, by header name.
struct Columns {
  int submit = -1;
  int duration = -1;
  int gpus = -1;
  int user = -1;  // optional
  std::size_t count = 0;
};

int Find(const std::vector<std::string_view>& header, std::string_view name) {
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  return -1;
}

Columns ColumnsFor(TraceFormat format,
                   const std::vector<std::string_view>& header) {
  Columns columns;
  columns.count = header.size();
  if (format == TraceFormat::kPhilly) {
    columns.submit = Find(header, "timestamp");
    columns.duration = Find(header, "duration");
    columns.gpus = Find(header, "num_gpus");
    columns.user = Find(header, "cluster");
  } else {
    columns.submit = Find(header, "submit_time");
    columns.duration = Find(header, "duration");
    columns.gpus = Find(header, "num_gpu");
    columns.user = Find(header, "model_name");
  }
  return columns;
}

bool Complete(const Columns& columns) {
  return columns.submit >= 0 && columns.duration >= 0 && columns.gpus >= 0;
}

// Seconds (possibly fractional) to ms; false unless finite and >= 0.
bool ParseSecondsMs(std::string_view text, int64_t* ms) {
  double seconds = 0;
  if (!ParseNumber(text, &seconds) || !std::isfinite(seconds) || seconds < 0 ||
      seconds > 1e12) {
    return false;
  }
  *ms = static_cast<int64_t>(std::llround(seconds * 1000.0));
  return true;
}

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

// Parses one data row into `job`; the reason on failure.
std::string ParseRow(TraceFormat format, const Columns& columns,
                     const std::vector<std::string_view>& cells,
                     TraceJob* job) {
  if (cells.size() != columns.count) {
    return absl::StrCat("expected ", columns.count, " columns, found ",
                        cells.size());
  }
  const std::string_view submit = cells[columns.submit];
  if (format == TraceFormat::kPhilly) {
    if (!ParseTimestampMs(submit, &job->submit_ms)) {
      return absl::StrCat("bad timestamp \"", std::string(submit), "\"");
    }
  } else if (!ParseSecondsMs(submit, &job->submit_ms)) {
    return absl::StrCat("bad submit time \"", std::string(submit), "\"");
  }
  const std::string_view duration = cells[columns.duration];
  if (!ParseSecondsMs(duration, &job->duration_ms)) {
    return absl::StrCat("bad duration \"", std::string(duration), "\"");
  }
  const std::string_view gpus = cells[columns.gpus];
  // 0 parses: a CPU-only job, which the caller leaves out by rule.
  if (!ParseNumber(gpus, &job->gpus)) {
    return absl::StrCat("bad GPU count \"", std::string(gpus), "\"");
  }
  job->user = columns.user >= 0 ? std::string(cells[columns.user]) : "";
  return "";
}

}  // namespace

absl::StatusOr<TraceFormat> ParseTraceFormat(std::string_view name) {
  if (name == "auto") return TraceFormat::kAuto;
  if (name == "philly") return TraceFormat::kPhilly;
  if (name == "tiresias") return TraceFormat::kTiresias;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown trace format \"", std::string(name),
                   "\" (known: auto, philly, tiresias)"));
}

std::string_view TraceFormatName(TraceFormat format) {
  switch (format) {
    case TraceFormat::kPhilly:
      return "philly";
    case TraceFormat::kTiresias:
      return "tiresias";
    case TraceFormat::kAuto:
      break;
  }
  return "auto";
}

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

absl::StatusOr<Trace> ParseTrace(std::string_view text, TraceFormat format,
                                 const std::string& source) {
  std::vector<std::string_view> lines = SplitView(text, '\n');
  std::size_t first = 0;
  while (first < lines.size() && TrimChars(lines[first], kBlanks).empty()) {
    ++first;
  }
  if (first == lines.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": empty trace (no header row)"));
  }
  const std::vector<std::string_view> header = SplitRow(lines[first]);
  if (Find(header, "num_replicas") >= 0 && Find(header, "application") >= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        source,
        ": a Pollux workload file has no run times (its jobs train to a "
        "target accuracy), so it cannot be replayed; use "
        "philly/pollux_philly.csv or a Tiresias trace"));
  }
  Trace trace;
  if (format == TraceFormat::kAuto) {
    for (TraceFormat candidate :
         {TraceFormat::kPhilly, TraceFormat::kTiresias}) {
      if (Complete(ColumnsFor(candidate, header))) {
        format = candidate;
        break;
      }
    }
    if (format == TraceFormat::kAuto) {
      return absl::InvalidArgumentError(absl::StrCat(
          source, ": unknown trace format (header \"",
          std::string(TrimChars(lines[first], kBlanks)),
          "\"); known: philly (timestamp,duration,num_gpus,...), tiresias "
          "(job_id,num_gpu,submit_time,...,duration,...)"));
    }
  }
  const Columns columns = ColumnsFor(format, header);
  if (!Complete(columns)) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": header \"", std::string(TrimChars(lines[first], kBlanks)),
        "\" lacks the columns of the ", std::string(TraceFormatName(format)),
        " format"));
  }
  trace.format = format;
  for (std::size_t i = first + 1; i < lines.size(); ++i) {
    if (TrimChars(lines[i], kBlanks).empty()) continue;
    TraceJob job;
    job.line = static_cast<int>(i + 1);
    const std::string why = ParseRow(format, columns, SplitRow(lines[i]), &job);
    if (!why.empty()) {
      if (trace.skipped_rows++ == 0) {
        trace.first_skip = absl::StrCat("line ", job.line, ": ", why);
      }
      continue;
    }
    // The simulator places GPUs; CPU-only jobs (real rows of the Philly
    // and Alibaba traces) take none and are left out by rule, counted
    // apart from malformed rows.
    if (job.gpus == 0) {
      ++trace.cpu_only_rows;
      continue;
    }
    job.id = JobId(trace.jobs.size() + 1);
    trace.jobs.push_back(std::move(job));
  }
  return trace;
}

absl::StatusOr<Trace> ReadTraceFile(const std::string& path,
                                    TraceFormat format) {
  if (absl::Status status = CheckNotDirectory(path, "trace file", "a trace");
      !status.ok()) {
    return status;
  }
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  return ParseTrace(*text, format, path);
}

}  // namespace gantry::sim
