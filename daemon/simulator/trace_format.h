// The trace formats gantry-sim reads, one table entry each: which header
// columns a format needs and how one data row becomes a job (or is left out
// by rule). trace_reader.cc runs the loop over the rows; each family of
// formats lives in its own trace_format_*.cc. Internal to the simulator.
// Pure functions and constant tables; thread-safe.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "daemon/simulator/trace_reader.h"

namespace gantry::sim::trace_format {

// Most GPUs one job may ask for; a row (or a job made of several rows)
// beyond it is malformed, which also keeps the sums far from overflow.
constexpr uint64_t kMaxGpusPerJob = 1'000'000;

// Where each column a format reads sits in the header; -1 when absent.
struct Columns {
  int submit = -1;
  int duration = -1;
  int gpus = -1;
  int user = -1;
  int start = -1;
  int end = -1;
  int share = -1;      // gpu_milli (alibaba2023), plan_gpu (alibaba2020)
  int instances = -1;  // inst_num (alibaba2020)
  int group = -1;      // job_name (alibaba2020): rows of one job
  std::size_t count = 0;
  bool complete = false;  // every column the format needs is there
};

enum class RowKind {
  kJob,      // a job (or one task of a job) to replay
  kCpuOnly,  // asks for no GPU: left out by rule
  kNotRun,   // no start or end time (never ran, or still pending)
};

struct RowRead {
  RowKind kind = RowKind::kJob;
  bool rounded_up = false;  // asked for a fraction of a GPU, given a whole one
  std::string group;        // rows of the same non-empty group are one job
};

struct FormatSpec {
  TraceFormat format;
  std::string_view name;     // the --format name
  std::string_view summary;  // for the "unknown trace format" message
  // The column names in published order, for raw files that ship without a
  // header row ("" when the file always has one).
  std::string_view published_header;
  Columns (*columns)(const std::vector<std::string_view>& header);
  // Fills `job` (submit_ms, duration_ms, gpus, user) and `row`; returns ""
  // or why the row is malformed. `cells` has columns.count entries.
  std::string (*parse)(const Columns& columns,
                       const std::vector<std::string_view>& cells,
                       TraceJob* job, RowRead* row);
};

// One entry per format, in the order auto-detection tries them.
extern const FormatSpec kPhilly;
extern const FormatSpec kTiresias;
extern const FormatSpec kAlibaba2020;
extern const FormatSpec kAlibaba2023;
extern const FormatSpec kAcme;

// Helpers shared by the format files.

// The whole of `text` as a number of type T; false otherwise.
template <typename T>
bool ParseNumber(std::string_view text, T* value) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *value);
  return ec == std::errc() && ptr == end && !text.empty();
}

// The index of the column called `name`, or -1.
int Find(const std::vector<std::string_view>& header, std::string_view name);

// One column a format reads: where its index goes, its header name, and
// whether the format needs it.
struct ColumnName {
  int Columns::*field;
  std::string_view name;
  bool required = true;
};

// The columns of `header` named in `names`; complete when every required
// one is there.
Columns ColumnsFrom(const std::vector<std::string_view>& header,
                    std::initializer_list<ColumnName> names);

// Seconds (possibly fractional) to ms; false unless finite, >= 0, sane.
bool ParseSecondsMs(std::string_view text, int64_t* ms);

// A whole number written as an integer or a float with no fraction ("8",
// "1.0"); false when negative, fractional or beyond kMaxGpusPerJob.
bool ParseWholeCount(std::string_view text, uint64_t* value);

// "bad <what> \"<text>\"": the message for a cell that does not parse.
std::string Bad(std::string_view what, std::string_view text);

// The message for a row whose end time is before its start time.
std::string EndsBeforeStart(std::string_view start, std::string_view end);

}  // namespace gantry::sim::trace_format
