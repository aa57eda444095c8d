// Alibaba's GPU-cluster traces (github.com/alibaba/clusterdata):
//
// alibaba2020: cluster-trace-gpu-v2020's pai_task_table (one row per task;
//   the published columns job_name,task_name,inst_num,status,start_time,
//   end_time,plan_cpu,plan_mem,plan_gpu,gpu_type; the raw CSV has no header).
//   Times are seconds from a hidden origin; start_time is when the task
//   launched, so a job arrives at its first task's launch (the trace's own
//   queueing is what a replay re-creates). plan_gpu is a percentage of one
//   GPU per instance (50 = half a GPU, 800 = 8 GPUs); each of the task's
//   inst_num instances gets ceil(plan_gpu / 100) whole GPUs, and the GPU
//   tasks of one job_name (workers, ps with GPUs, evaluators) are one gang.
//   The task table names no user: a `user` column (joined from
//   pai_job_table on job_name) is used when there.
//
// alibaba2023: cluster-trace-gpu-v2023's openb_pod_list_*.csv (one row per
//   pod: name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,
//   creation_time,deletion_time,scheduled_time, seconds). creation_time is
//   the submit time, deletion_time - scheduled_time the run time (pods still
//   Running at the end of the trace were deleted then, so their run time is
//   cut there). num_gpu = 1 with gpu_milli < 1000 is a share of one GPU,
//   given a whole one. No user column: every pod is one user's.
//
// Pure; thread-safe.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "daemon/simulator/trace_format.h"

namespace gantry::sim::trace_format {
namespace {

Columns Alibaba2020Columns(const std::vector<std::string_view>& header) {
  return ColumnsFrom(header, {{&Columns::group, "job_name"},
                              {&Columns::instances, "inst_num"},
                              {&Columns::start, "start_time"},
                              {&Columns::end, "end_time"},
                              {&Columns::share, "plan_gpu"},
                              {&Columns::user, "user", false}});
}

Columns Alibaba2023Columns(const std::vector<std::string_view>& header) {
  return ColumnsFrom(header, {{&Columns::gpus, "num_gpu"},
                              {&Columns::share, "gpu_milli"},
                              {&Columns::submit, "creation_time"},
                              {&Columns::start, "scheduled_time"},
                              {&Columns::end, "deletion_time"}});
}

// start and end cells into job->duration_ms; sets *start_ms. Empty cells
// mean the row never ran (row->kind = kNotRun, not an error).
std::string ParseRunTimes(std::string_view start, std::string_view end,
                          int64_t* start_ms, TraceJob* job, RowRead* row) {
  if (start.empty() || end.empty()) {
    row->kind = RowKind::kNotRun;
    return "";
  }
  int64_t end_ms = 0;
  if (!ParseSecondsMs(start, start_ms)) return Bad("start time", start);
  if (!ParseSecondsMs(end, &end_ms)) return Bad("end time", end);
  if (end_ms < *start_ms) {
    return EndsBeforeStart(start, end);
  }
  job->duration_ms = end_ms - *start_ms;
  return "";
}

std::string ParseAlibaba2020Row(const Columns& columns,
                                const std::vector<std::string_view>& cells,
                                TraceJob* job, RowRead* row) {
  const std::string_view instances_cell = cells[columns.instances];
  uint64_t instances = 0;
  if (!ParseWholeCount(instances_cell, &instances)) {
    return Bad("inst_num", instances_cell);
  }
  // An empty plan_gpu is a task that asked for no GPU (parameter servers,
  // CPU tasks), as is 0.
  const std::string_view plan_gpu = cells[columns.share];
  double percent = 0;
  if (!plan_gpu.empty() &&
      (!ParseNumber(plan_gpu, &percent) || !std::isfinite(percent) ||
       percent < 0 || percent > 100.0 * kMaxGpusPerJob)) {
    return Bad("plan_gpu", plan_gpu);
  }
  const auto per_instance = static_cast<uint64_t>(std::ceil(percent / 100.0));
  const uint64_t gpus = instances * per_instance;
  if (gpus > kMaxGpusPerJob) {
    return absl::StrCat("asks for ", gpus, " GPUs (over ", kMaxGpusPerJob, ")");
  }
  row->group = std::string(cells[columns.group]);
  job->user = columns.user >= 0 ? std::string(cells[columns.user]) : "";
  if (gpus == 0) {
    row->kind = RowKind::kCpuOnly;
    return "";
  }
  job->gpus = static_cast<uint32_t>(gpus);
  row->rounded_up = std::fmod(percent, 100.0) != 0;
  return ParseRunTimes(cells[columns.start], cells[columns.end],
                       &job->submit_ms, job, row);
}

std::string ParseAlibaba2023Row(const Columns& columns,
                                const std::vector<std::string_view>& cells,
                                TraceJob* job, RowRead* row) {
  const std::string_view gpus = cells[columns.gpus];
  uint64_t count = 0;
  if (!ParseWholeCount(gpus, &count)) return Bad("num_gpu", gpus);
  const std::string_view milli = cells[columns.share];
  double share = 0;
  if (!ParseNumber(milli, &share) || !std::isfinite(share) || share < 0) {
    return Bad("gpu_milli", milli);
  }
  const std::string_view submit = cells[columns.submit];
  if (!ParseSecondsMs(submit, &job->submit_ms)) {
    return Bad("creation time", submit);
  }
  if (count == 0) {
    row->kind = RowKind::kCpuOnly;
    return "";
  }
  job->gpus = static_cast<uint32_t>(count);
  row->rounded_up = share > 0 && share < 1000;
  int64_t start_ms = 0;
  return ParseRunTimes(cells[columns.start], cells[columns.end], &start_ms, job,
                       row);
}

}  // namespace

const FormatSpec kAlibaba2020{
    TraceFormat::kAlibaba2020,
    "alibaba2020",
    "alibaba2020 (pai_task_table: job_name,...,inst_num,...,plan_gpu,...; "
    "the raw file has no header, so give --format alibaba2020)",
    "job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,"
    "plan_mem,plan_gpu,gpu_type",
    Alibaba2020Columns,
    ParseAlibaba2020Row};

const FormatSpec kAlibaba2023{
    TraceFormat::kAlibaba2023,
    "alibaba2023",
    "alibaba2023 (openb_pod_list: name,...,num_gpu,gpu_milli,...,"
    "creation_time,deletion_time,scheduled_time)",
    "",
    Alibaba2023Columns,
    ParseAlibaba2023Row};

}  // namespace gantry::sim::trace_format
