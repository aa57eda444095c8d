// The Philly (Pollux's cut) and Tiresias trace formats: one row per job,
// with the run time in a `duration` column. Pure; thread-safe.
#include "daemon/simulator/trace_format.h"

namespace gantry::sim::trace_format {
namespace {

Columns PhillyColumns(const std::vector<std::string_view>& header) {
  return ColumnsFrom(header, {{&Columns::submit, "timestamp"},
                              {&Columns::duration, "duration"},
                              {&Columns::gpus, "num_gpus"},
                              {&Columns::user, "cluster", false}});
}

Columns TiresiasColumns(const std::vector<std::string_view>& header) {
  return ColumnsFrom(header, {{&Columns::submit, "submit_time"},
                              {&Columns::duration, "duration"},
                              {&Columns::gpus, "num_gpu"},
                              {&Columns::user, "model_name", false}});
}

// The duration, GPU and user cells both formats share; the submit cell is
// the caller's.
std::string ParseCommon(const Columns& columns,
                        const std::vector<std::string_view>& cells,
                        TraceJob* job, RowRead* row) {
  const std::string_view duration = cells[columns.duration];
  if (!ParseSecondsMs(duration, &job->duration_ms)) {
    return Bad("duration", duration);
  }
  const std::string_view gpus = cells[columns.gpus];
  uint64_t count = 0;
  if (!ParseWholeCount(gpus, &count)) return Bad("GPU count", gpus);
  job->gpus = static_cast<uint32_t>(count);
  row->kind = count == 0 ? RowKind::kCpuOnly : RowKind::kJob;
  job->user = columns.user >= 0 ? std::string(cells[columns.user]) : "";
  return "";
}

std::string ParsePhillyRow(const Columns& columns,
                           const std::vector<std::string_view>& cells,
                           TraceJob* job, RowRead* row) {
  const std::string_view submit = cells[columns.submit];
  if (!ParseTimestampMs(submit, &job->submit_ms)) {
    return Bad("timestamp", submit);
  }
  return ParseCommon(columns, cells, job, row);
}

std::string ParseTiresiasRow(const Columns& columns,
                             const std::vector<std::string_view>& cells,
                             TraceJob* job, RowRead* row) {
  const std::string_view submit = cells[columns.submit];
  if (!ParseSecondsMs(submit, &job->submit_ms)) {
    return Bad("submit time", submit);
  }
  return ParseCommon(columns, cells, job, row);
}

}  // namespace

const FormatSpec kPhilly{TraceFormat::kPhilly,
                         "philly",
                         "philly (timestamp,duration,num_gpus,...)",
                         "",
                         PhillyColumns,
                         ParsePhillyRow};

const FormatSpec kTiresias{
    TraceFormat::kTiresias,
    "tiresias",
    "tiresias (job_id,num_gpu,submit_time,...,duration,...)",
    "",
    TiresiasColumns,
    ParseTiresiasRow};

}  // namespace gantry::sim::trace_format
