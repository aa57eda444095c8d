#include "cli/slurm/usage_report.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/text.h"

namespace gantry::cli {

int64_t OverlapMs(int64_t from_ms, int64_t to_ms, int64_t start_ms,
                  int64_t end_ms) {
  const int64_t begin = std::max(from_ms, start_ms);
  const int64_t end = std::min(to_ms, end_ms);
  return end > begin ? end - begin : 0;
}

Usage JobUsage(const v1::JobRecord& job, int64_t start_ms, int64_t end_ms,
               int64_t now_ms) {
  double cpus = 0;
  double gpus = 0;
  for (const v1::NodeAllocation& a : job.allocation()) {
    cpus += a.cpus();
    gpus += a.gpu_indices_size();
  }
  int64_t held_ms = 0;
  for (const v1::AttemptRecord& attempt : job.attempts()) {
    if (attempt.start_time_ms() <= 0) continue;
    const int64_t to =
        attempt.end_time_ms() > 0 ? attempt.end_time_ms() : now_ms;
    held_ms += OverlapMs(attempt.start_time_ms(), to, start_ms, end_ms);
  }
  // Records from before attempts were kept: the job's own times.
  if (job.attempts().empty() && job.start_time_ms() > 0) {
    const int64_t to = job.end_time_ms() > 0 ? job.end_time_ms() : now_ms;
    held_ms = OverlapMs(job.start_time_ms(), to, start_ms, end_ms);
  }
  const double seconds = static_cast<double>(held_ms) / 1000.0;
  return {seconds * cpus, seconds * gpus};
}

UsageByUser SumUsage(
    const google::protobuf::RepeatedPtrField<v1::JobRecord>& jobs,
    int64_t start_ms, int64_t end_ms, int64_t now_ms) {
  UsageByUser sum;
  AddUsage(jobs, start_ms, end_ms, now_ms, sum);
  return sum;
}

void AddUsage(const google::protobuf::RepeatedPtrField<v1::JobRecord>& jobs,
              int64_t start_ms, int64_t end_ms, int64_t now_ms,
              UsageByUser& sum) {
  for (const v1::JobRecord& job : jobs) {
    const Usage used = JobUsage(job, start_ms, end_ms, now_ms);
    if (used.cpu_seconds == 0 && used.gpu_seconds == 0) continue;
    Usage& user = sum.users[job.user()];
    user.cpu_seconds += used.cpu_seconds;
    user.gpu_seconds += used.gpu_seconds;
    sum.total.cpu_seconds += used.cpu_seconds;
    sum.total.gpu_seconds += used.gpu_seconds;
  }
}

absl::StatusOr<TimeUnit> ParseTimeUnit(std::string_view text) {
  const std::string lower = absl::AsciiStrToLower(AsAbsl(text));
  if (lower == "minutes" || lower == "minute" || lower == "min" ||
      lower == "m") {
    return TimeUnit::kMinutes;
  }
  if (lower == "hours" || lower == "hour" || lower == "h") {
    return TimeUnit::kHours;
  }
  if (lower == "seconds" || lower == "second" || lower == "sec" ||
      lower == "s") {
    return TimeUnit::kSeconds;
  }
  if (lower == "percent" || lower == "per" || lower == "%") {
    return TimeUnit::kPercent;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("invalid time format \"", AsAbsl(text.substr(0, 40)),
                   "\" (valid: minutes, hours, seconds, percent)"));
}

const char* TimeUnitWord(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kMinutes:
      return "Minutes";
    case TimeUnit::kHours:
      return "Hours";
    case TimeUnit::kSeconds:
      return "Seconds";
    case TimeUnit::kPercent:
      return "Percentage of Total";
  }
  return "";
}

std::string FormatUsage(double seconds, TimeUnit unit,
                        double capacity_seconds) {
  switch (unit) {
    case TimeUnit::kMinutes:
      return absl::StrCat(static_cast<int64_t>(std::llround(seconds / 60)));
    case TimeUnit::kHours:
      return absl::StrCat(static_cast<int64_t>(std::llround(seconds / 3600)));
    case TimeUnit::kSeconds:
      return absl::StrCat(static_cast<int64_t>(std::llround(seconds)));
    case TimeUnit::kPercent:
      return absl::StrFormat("%.2f%%", capacity_seconds > 0
                                           ? 100 * seconds / capacity_seconds
                                           : 0.0);
  }
  return "";
}

}  // namespace gantry::cli
