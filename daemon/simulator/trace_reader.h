// Reading GPU-cluster job traces (the public ones under ../shared/data/traces)
// into one list of jobs for the trace simulator: when each job was submitted,
// how long it ran, how many GPUs it asked for. Pure functions; thread-safe.
//
// Formats, detected from the header row (column order does not matter):
//   philly   timestamp,duration,num_gpus[,gpu_time,cluster]  (Pollux's cut
//            of the Microsoft Philly trace). timestamp "YYYY-MM-DD HH:MM:SS"
//            = submit time; duration = run time in seconds; num_gpus = the
//            gang's GPUs; cluster (the virtual cluster) = the "user" for
//            fair share.
//   tiresias job_id,num_gpu,submit_time,...,duration (Tiresias' simulator
//            traces). submit_time and duration in seconds; model_name, when
//            present, is the user.
// Pollux's workload-N.csv (name,time,application,num_replicas,batch_size) is
// refused: its jobs run "until the model reaches its target accuracy", so
// the file holds no run time to replay.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/ids.h"

namespace gantry::sim {

enum class TraceFormat { kAuto, kPhilly, kTiresias };

struct TraceJob {
  JobId id;               // 1-based row order in the file
  int64_t submit_ms = 0;  // philly: Unix-epoch ms of the local wall clock
  int64_t duration_ms = 0;
  uint32_t gpus = 0;
  std::string user;  // philly: virtual cluster; tiresias: model name
  int line = 0;      // in the file, for messages
};

struct Trace {
  TraceFormat format = TraceFormat::kAuto;  // the one used
  std::vector<TraceJob> jobs;               // in file order
  int skipped_rows = 0;                     // malformed rows left out
  int cpu_only_rows = 0;   // well-formed rows of 0 GPUs, left out by rule
  std::string first_skip;  // "line 17: <why>", if any
};

// "philly", "tiresias" or "auto" (kAuto). INVALID_ARGUMENT otherwise.
absl::StatusOr<TraceFormat> ParseTraceFormat(std::string_view name);
std::string_view TraceFormatName(TraceFormat format);

// Parses a whole trace. `source` names it in messages. A malformed row (wrong
// column count, a value that is not a number or timestamp, a negative
// duration, no GPUs) is counted in skipped_rows, never fatal; blank lines are
// ignored. Errors: INVALID_ARGUMENT for an empty input, a header that matches
// no known format (or not the one asked for), or a Pollux workload file.
absl::StatusOr<Trace> ParseTrace(std::string_view text, TraceFormat format,
                                 const std::string& source);

// ReadWholeFile + ParseTrace. NOT_FOUND when the file does not exist.
absl::StatusOr<Trace> ReadTraceFile(const std::string& path,
                                    TraceFormat format);

// "YYYY-MM-DD HH:MM:SS" read as UTC, in ms since the Unix epoch; false when
// malformed. Exposed for tests.
bool ParseTimestampMs(std::string_view text, int64_t* ms);

}  // namespace gantry::sim
