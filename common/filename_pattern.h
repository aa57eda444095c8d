// The file names of a batch job's output and error (sbatch -o/-e): the
// patterns the user gives, expanded for one job when it is submitted.
//
// Pure function, thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gantry {

// The array a job is a task of (job_array.h), for %A and %a.
struct ArrayTaskIds {
  uint64_t array_job_id = 0;
  uint32_t task_id = 0;
};

// Expands sbatch filename patterns: %j job id, %x job name, %u user, %A the
// array's job id and %a the task's index (for a job that is no array task,
// %A is its job id and %a 4294967294, as in Slurm), %%, and leaves other
// %-sequences unchanged (they are expanded per node/task later).
std::string ExpandFilenamePattern(
    std::string_view pattern, uint64_t job_id, std::string_view job_name,
    std::string_view user,
    std::optional<ArrayTaskIds> array_task = std::nullopt);

// Expands %N, left by ExpandFilenamePattern, to `node`'s short name (up to
// its first '.'), as Slurm names the node a batch script runs on: known
// only once the job is placed.
std::string ExpandNodeInPath(std::string_view path, std::string_view node);

}  // namespace gantry
