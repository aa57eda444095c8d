// sreport's arithmetic: how much of a period each job used, as the overlap
// of each of its attempts with the period times the CPUs and GPUs it held,
// summed by user (and account), and the units sreport prints it in.
//
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "gantry/v1/types.pb.h"

namespace gantry::cli {

struct Usage {
  double cpu_seconds = 0;
  double gpu_seconds = 0;
};

// Milliseconds of [start_ms, end_ms) that [from_ms, to_ms) covers.
int64_t OverlapMs(int64_t from_ms, int64_t to_ms, int64_t start_ms,
                  int64_t end_ms);

// What `job` used of [start_ms, end_ms): every attempt's run (to `now_ms`
// while it runs) times the job's allocated CPUs and GPUs. A job that never
// started used nothing.
Usage JobUsage(const v1::JobRecord& job, int64_t start_ms, int64_t end_ms,
               int64_t now_ms);

struct UsageByUser {
  std::map<std::string, Usage> users;  // by user name
  Usage total;
};
// Adds what `jobs` used of [start_ms, end_ms) to `sum` (one page of an
// accounting query after another).
void AddUsage(const google::protobuf::RepeatedPtrField<v1::JobRecord>& jobs,
              int64_t start_ms, int64_t end_ms, int64_t now_ms,
              UsageByUser& sum);
UsageByUser SumUsage(
    const google::protobuf::RepeatedPtrField<v1::JobRecord>& jobs,
    int64_t start_ms, int64_t end_ms, int64_t now_ms);

// sreport -t: minutes (default), hours, seconds or percent (of the
// cluster's capacity over the period).
enum class TimeUnit { kMinutes, kHours, kSeconds, kPercent };
absl::StatusOr<TimeUnit> ParseTimeUnit(std::string_view text);
// "Minutes", "Hours", "Seconds", "Percentage" (sreport's banner word).
const char* TimeUnitWord(TimeUnit unit);
// `seconds` of usage in `unit`, as sreport prints it (whole numbers;
// percent with two decimals of `capacity_seconds`).
std::string FormatUsage(double seconds, TimeUnit unit, double capacity_seconds);

}  // namespace gantry::cli
