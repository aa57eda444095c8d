// sbatch --array: which task indices a job array has and how many of its
// tasks may run at once.
//
//   0-15        every index from 0 to 15
//   0-15:4      0, 4, 8, 12 (a step)
//   1,3,5-7     a list of the above; overlaps merge
//   0-99%10     any of the above, at most 10 tasks running at once
//
// Each task of an array becomes its own job (consecutive job ids; the first
// one's id is the array's id). Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry {

// At most this many tasks in one array, with indices at most
// kMaxArrayTaskId: large enough for any sweep, small enough that one
// submission cannot flood the controller.
inline constexpr uint32_t kMaxArrayTasks = 10'000;
inline constexpr uint32_t kMaxArrayTaskId = 4'000'000;

struct JobArraySpec {
  std::vector<uint32_t> task_ids;  // ascending, no duplicates, never empty
  uint32_t max_running = 0;        // the %N throttle; 0: no limit

  uint32_t min_task_id() const { return task_ids.front(); }
  uint32_t max_task_id() const { return task_ids.back(); }
  // The distance between consecutive indices when it is the same
  // throughout; 1 for a single task or uneven indices.
  uint32_t step() const;
  bool operator==(const JobArraySpec&) const = default;
};

// Parses an --array value. INVALID_ARGUMENT with a reason that names the
// bad part (callers add the option's name): malformed text, a range whose
// start is above its end, a zero step, a %0 throttle, more than
// kMaxArrayTasks tasks, an index above kMaxArrayTaskId.
absl::StatusOr<JobArraySpec> ParseJobArray(std::string_view text);

// The canonical text, e.g. "0-12:4,20%2"; ParseJobArray reads it back to
// the same spec.
std::string FormatJobArray(const JobArraySpec& spec);

}  // namespace gantry
