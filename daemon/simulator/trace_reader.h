// Reading GPU-cluster job traces (the public ones under ../shared/data/traces)
// into one list of jobs for the trace simulator: when each job was submitted,
// how long it ran, how many GPUs it asked for. Pure functions; thread-safe.
//
// Formats, detected from the header row (column order does not matter):
//   philly      timestamp,duration,num_gpus[,gpu_time,cluster]  (Pollux's cut
//               of the Microsoft Philly trace). timestamp "YYYY-MM-DD
//               HH:MM:SS" = submit time; duration = run time in seconds;
//               num_gpus = the gang's GPUs; cluster (the virtual cluster) =
//               the "user" for fair share.
//   tiresias    job_id,num_gpu,submit_time,...,duration (Tiresias' simulator
//               traces). submit_time and duration in seconds; model_name,
//               when present, is the user.
//   alibaba2020 pai_task_table of Alibaba's cluster-trace-gpu-v2020
//               (job_name,task_name,inst_num,status,start_time,end_time,
//               plan_cpu,plan_mem,plan_gpu,gpu_type). The raw CSV has no
//               header: give --format alibaba2020, or put the published
//               pai_task_table.header line on top. The tasks of one job_name
//               are one gang of sum(inst_num x ceil(plan_gpu / 100)) GPUs,
//               from the first task's start to the last task's end.
//   alibaba2023 openb_pod_list_*.csv of cluster-trace-gpu-v2023 (name,...,
//               num_gpu,gpu_milli,...,creation_time,deletion_time,
//               scheduled_time). creation = submit, run time = deletion -
//               scheduled; a GPU share (gpu_milli < 1000) gets a whole GPU.
//   acme        trace_seren.csv / trace_kalos.csv of InternLM/AcmeTrace
//               (job_id,user,node_num,gpu_num,...,submit_time,start_time,
//               end_time,...). Times "YYYY-MM-DD HH:MM:SS+08:00"; run
//               time = end_time - start_time (Kalos' duration cell holds
//               end - submit); gpu_num = the job's GPUs.
// Rows that never ran (no start or end time) are left out by rule and
// counted (not_run_rows), as are rows of no GPU (cpu_only_rows); a job's
// final state (failed, cancelled) does not matter: it held its GPUs for its
// run time. Fractions of a GPU are rounded up to a whole one, since Gantry
// allocates whole GPUs, and counted (fractional_gpu_rows).
// Pollux's workload-N.csv (name,time,application,num_replicas,batch_size) is
// refused: its jobs run "until the model reaches its target accuracy", so
// the file holds no run time to replay. So are pai_job_table (no GPU counts)
// and the 2023 openb pod lists without times (openb_pod_list_multigpu*).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/ids.h"

namespace gantry::sim {

enum class TraceFormat {
  kAuto,
  kPhilly,
  kTiresias,
  kAlibaba2020,
  kAlibaba2023,
  kAcme,
};

struct TraceJob {
  JobId id;               // 1-based row order in the file
  int64_t submit_ms = 0;  // philly: Unix-epoch ms of the local wall clock;
                          // acme: Unix-epoch ms (UTC); others: trace's own
                          // seconds x 1000
  int64_t duration_ms = 0;
  uint32_t gpus = 0;
  std::string user;  // philly: virtual cluster; tiresias: model name;
                     // acme: user; alibaba: a `user` column if added, else ""
  int line = 0;      // in the file, for messages (a job's first row)
};

struct Trace {
  TraceFormat format = TraceFormat::kAuto;  // the one used
  std::vector<TraceJob> jobs;               // in file order
  int skipped_rows = 0;                     // malformed rows left out
  int cpu_only_rows = 0;        // well-formed rows of 0 GPUs, left out by rule
  int not_run_rows = 0;         // well-formed rows with no start/end, left out
  int fractional_gpu_rows = 0;  // rows asking a GPU share, rounded up
  std::string first_skip;       // "line 17: <why>", if any
};

// "auto" (kAuto) or a format's name ("philly", "tiresias", "alibaba2020",
// "alibaba2023", "acme"). INVALID_ARGUMENT otherwise.
absl::StatusOr<TraceFormat> ParseTraceFormat(std::string_view name);
std::string_view TraceFormatName(TraceFormat format);

// Parses a whole trace. `source` names it in messages. A malformed row (wrong
// column count, a value that is not a number or timestamp, a negative
// duration, no GPUs) is counted in skipped_rows, never fatal; blank lines are
// ignored. Errors: INVALID_ARGUMENT for an empty input, a header that matches
// no known format (or not the one asked for), a Pollux workload file, a
// pai_job_table or an openb pod list without times. With kAlibaba2020 a first
// row that is not a header is read as data in the published column order.
absl::StatusOr<Trace> ParseTrace(std::string_view text, TraceFormat format,
                                 const std::string& source);

// ReadWholeFile + ParseTrace. NOT_FOUND when the file does not exist.
absl::StatusOr<Trace> ReadTraceFile(const std::string& path,
                                    TraceFormat format);

// "YYYY-MM-DD HH:MM:SS" read as UTC, in ms since the Unix epoch; false when
// malformed. Exposed for tests.
bool ParseTimestampMs(std::string_view text, int64_t* ms);

}  // namespace gantry::sim
