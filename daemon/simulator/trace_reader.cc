// The trace reader's loop (trace_reader.h): finds the header and the format,
// turns each row into a job through the format's entry (trace_format.h),
// counts what is left out and folds the rows of one job together. Pure;
// thread-safe.
#include "daemon/simulator/trace_reader.h"

#include <algorithm>
#include <array>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "common/split_view.h"
#include "common/text.h"
#include "common/text_file.h"
#include "daemon/simulator/trace_format.h"

namespace gantry::sim {
namespace {

using trace_format::Columns;
using trace_format::FormatSpec;
using trace_format::RowKind;
using trace_format::RowRead;

// In the order auto-detection tries them; no two match the same header.
constexpr std::array<const FormatSpec*, 5> kFormats = {
    &trace_format::kPhilly, &trace_format::kTiresias,
    &trace_format::kAlibaba2020, &trace_format::kAlibaba2023,
    &trace_format::kAcme};

// What is trimmed around lines and cells: blanks and line ends, not the
// rest of ASCII white space (\v, \f), which stays part of the text.
constexpr std::string_view kBlanks = " \t\r\n";

std::vector<std::string_view> SplitRow(std::string_view line) {
  std::vector<std::string_view> cells = SplitView(line, ',');
  for (auto& cell : cells) cell = TrimChars(cell, kBlanks);
  return cells;
}

const FormatSpec* SpecFor(TraceFormat format) {
  for (const FormatSpec* spec : kFormats) {
    if (spec->format == format) return spec;
  }
  return nullptr;
}

// Files that look like traces but cannot be replayed: "" or why not.
std::string Refusal(const std::vector<std::string_view>& header) {
  using trace_format::Find;
  if (Find(header, "num_replicas") >= 0 && Find(header, "application") >= 0) {
    return "a Pollux workload file has no run times (its jobs train to a "
           "target accuracy), so it cannot be replayed; use "
           "philly/pollux_philly.csv or a Tiresias trace";
  }
  if (Find(header, "inst_id") >= 0 && Find(header, "job_name") >= 0 &&
      Find(header, "plan_gpu") < 0 && Find(header, "task_name") < 0) {
    return "an Alibaba pai_job_table has no GPU counts; replay "
           "pai_task_table with --format alibaba2020";
  }
  if (Find(header, "gpu_milli") >= 0 && Find(header, "num_gpu") >= 0 &&
      Find(header, "creation_time") < 0) {
    return "an openb pod list without creation/deletion/scheduled times "
           "(openb_pod_list_multigpu*) has no arrivals or run times to "
           "replay; use openb_pod_list_default.csv or another with times";
  }
  return "";
}

std::string UnknownFormat(std::string_view header_line) {
  std::string known;
  for (const FormatSpec* spec : kFormats) {
    absl::StrAppend(&known, known.empty() ? "" : "; ",
                    std::string(spec->summary));
  }
  return absl::StrCat("unknown trace format (header \"",
                      std::string(header_line), "\"); known: ", known);
}

// Rows of one job (alibaba2020's tasks) folded into the first: the gang is
// every task's GPUs, from the earliest start to the latest end.
bool Merge(const TraceJob& task, TraceJob* job, std::string* why) {
  const uint64_t gpus = uint64_t{job->gpus} + task.gpus;
  if (gpus > trace_format::kMaxGpusPerJob) {
    *why = absl::StrCat("its job asks for ", gpus, " GPUs (over ",
                        trace_format::kMaxGpusPerJob, ")");
    return false;
  }
  const int64_t end = std::max(job->submit_ms + job->duration_ms,
                               task.submit_ms + task.duration_ms);
  job->gpus = static_cast<uint32_t>(gpus);
  job->submit_ms = std::min(job->submit_ms, task.submit_ms);
  job->duration_ms = end - job->submit_ms;
  return true;
}

}  // namespace

absl::StatusOr<TraceFormat> ParseTraceFormat(std::string_view name) {
  if (name == "auto") return TraceFormat::kAuto;
  std::string known = "auto";
  for (const FormatSpec* spec : kFormats) {
    if (name == spec->name) return spec->format;
    absl::StrAppend(&known, ", ", std::string(spec->name));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown trace format \"", std::string(name), "\" (known: ", known, ")"));
}

std::string_view TraceFormatName(TraceFormat format) {
  const FormatSpec* spec = SpecFor(format);
  return spec != nullptr ? spec->name : "auto";
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
  const std::string_view header_line = TrimChars(lines[first], kBlanks);
  std::vector<std::string_view> header = SplitRow(lines[first]);
  if (const std::string why = Refusal(header); !why.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", why));
  }
  const FormatSpec* spec = SpecFor(format);
  if (spec == nullptr) {
    for (const FormatSpec* candidate : kFormats) {
      if (candidate->columns(header).complete) {
        spec = candidate;
        break;
      }
    }
    if (spec == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": ", UnknownFormat(header_line)));
    }
  }
  std::size_t first_data = first + 1;
  Columns columns = spec->columns(header);
  if (!columns.complete && !spec->published_header.empty()) {
    // A raw file without its header row: the published column order, and
    // the first line is data.
    header = SplitRow(spec->published_header);
    columns = spec->columns(header);
    first_data = first;
  }
  if (!columns.complete) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": header \"", std::string(header_line),
        "\" lacks the columns of the ", std::string(spec->name), " format"));
  }
  Trace trace;
  trace.format = spec->format;
  std::unordered_map<std::string, std::size_t> job_of_group;
  auto skip = [&trace](int line, const std::string& why) {
    if (trace.skipped_rows++ == 0) {
      trace.first_skip = absl::StrCat("line ", line, ": ", why);
    }
  };
  for (std::size_t i = first_data; i < lines.size(); ++i) {
    if (TrimChars(lines[i], kBlanks).empty()) continue;
    TraceJob job;
    job.line = static_cast<int>(i + 1);
    const std::vector<std::string_view> cells = SplitRow(lines[i]);
    if (cells.size() != columns.count) {
      skip(job.line, absl::StrCat("expected ", columns.count,
                                  " columns, found ", cells.size()));
      continue;
    }
    RowRead row;
    if (std::string why = spec->parse(columns, cells, &job, &row);
        !why.empty()) {
      skip(job.line, why);
      continue;
    }
    // The simulator places GPUs: CPU-only rows (real rows of the Philly,
    // Alibaba and Acme traces) take none, and rows that never ran have no
    // run time; both are left out by rule, counted apart from malformed
    // rows.
    if (row.kind == RowKind::kCpuOnly) {
      ++trace.cpu_only_rows;
      continue;
    }
    if (row.kind == RowKind::kNotRun) {
      ++trace.not_run_rows;
      continue;
    }
    if (!row.group.empty()) {
      const auto [it, fresh] =
          job_of_group.try_emplace(row.group, trace.jobs.size());
      if (!fresh) {
        if (std::string why; !Merge(job, &trace.jobs[it->second], &why)) {
          skip(job.line, why);
          continue;
        }
        trace.fractional_gpu_rows += row.rounded_up ? 1 : 0;
        continue;
      }
    }
    trace.fractional_gpu_rows += row.rounded_up ? 1 : 0;
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
