// The Acme traces of Shanghai AI Lab (github.com/InternLM/AcmeTrace,
// data/job_trace/trace_seren.csv and trace_kalos.csv): one row per job,
// job_id,user,node_num,gpu_num,cpu_num,[mem_per_pod_GB,shared_mem_per_pod,]
// type,state,submit_time,start_time,end_time,[fail_time,stop_time,]duration,
// queue,gpu_time. Times are "YYYY-MM-DD HH:MM:SS+08:00" (Seren) or
// "...+00:00" (Kalos), read as UTC instants; gpu_num is the whole job's
// GPUs (node_num nodes of them); user is the fair-share user. The run time
// is end_time - start_time, the README's definition of `duration`; the
// duration cell itself is not used, because Kalos writes end - submit there
// (its published example: submitted 11:00:58, started 11:01:08, ended
// 11:01:16, duration 18), which would replay its queueing as work. A job
// without a start or end time never ran. Pure; thread-safe.
#include "daemon/simulator/trace_format.h"

namespace gantry::sim::trace_format {
namespace {

Columns AcmeColumns(const std::vector<std::string_view>& header) {
  return ColumnsFrom(header, {{&Columns::gpus, "gpu_num"},
                              {&Columns::submit, "submit_time"},
                              {&Columns::start, "start_time"},
                              {&Columns::end, "end_time"},
                              {&Columns::user, "user", false}});
}

// "YYYY-MM-DD HH:MM:SS" with an optional UTC offset ("+08:00", "-05:00",
// "Z"), as ms since the Unix epoch in UTC; false when malformed.
bool ParseZonedTimestampMs(std::string_view text, int64_t* ms) {
  if (text.size() < 19 || !ParseTimestampMs(text.substr(0, 19), ms)) {
    return false;
  }
  const std::string_view zone = text.substr(19);
  if (zone.empty() || zone == "Z") return true;
  if (zone.size() != 6 || (zone[0] != '+' && zone[0] != '-') ||
      zone[3] != ':') {
    return false;
  }
  int hours = 0, minutes = 0;
  if (!ParseNumber(zone.substr(1, 2), &hours) ||
      !ParseNumber(zone.substr(4, 2), &minutes) || hours > 23 || minutes > 59) {
    return false;
  }
  const int64_t offset_ms = (hours * 60LL + minutes) * 60'000LL;
  *ms += zone[0] == '+' ? -offset_ms : offset_ms;
  return true;
}

std::string ParseAcmeRow(const Columns& columns,
                         const std::vector<std::string_view>& cells,
                         TraceJob* job, RowRead* row) {
  const std::string_view gpus = cells[columns.gpus];
  uint64_t count = 0;
  if (!ParseWholeCount(gpus, &count)) return Bad("gpu_num", gpus);
  const std::string_view submit = cells[columns.submit];
  if (!ParseZonedTimestampMs(submit, &job->submit_ms)) {
    return Bad("submit time", submit);
  }
  job->user = columns.user >= 0 ? std::string(cells[columns.user]) : "";
  if (count == 0) {
    row->kind = RowKind::kCpuOnly;
    return "";
  }
  job->gpus = static_cast<uint32_t>(count);
  const std::string_view start = cells[columns.start];
  const std::string_view end = cells[columns.end];
  if (start.empty() || end.empty()) {
    row->kind = RowKind::kNotRun;
    return "";
  }
  int64_t start_ms = 0, end_ms = 0;
  if (!ParseZonedTimestampMs(start, &start_ms)) {
    return Bad("start time", start);
  }
  if (!ParseZonedTimestampMs(end, &end_ms)) return Bad("end time", end);
  if (end_ms < start_ms) {
    return EndsBeforeStart(start, end);
  }
  job->duration_ms = end_ms - start_ms;
  return "";
}

}  // namespace

const FormatSpec kAcme{
    TraceFormat::kAcme,
    "acme",
    "acme (job_id,user,node_num,gpu_num,...,submit_time,start_time,"
    "end_time,...)",
    "",
    AcmeColumns,
    ParseAcmeRow};

}  // namespace gantry::sim::trace_format
