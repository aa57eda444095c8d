// srun -i on the controller's side: a step's input mode checked against
// its tasks, and each task's stdin as its agent is told it
// (RankLaunch.stdin_from_caller / stdin_path). Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "gantry/v1/agent.pb.h"
#include "gantry/v1/client.pb.h"
#include "gantry/v1/types.pb.h"

namespace gantry {

// Longest input file pattern taken (the kernel's PATH_MAX).
inline constexpr size_t kMaxStepInputPattern = 4096;

// INVALID_ARGUMENT naming the value for a task id the step does not have
// (it has `task_count` tasks), or a file pattern that is empty, holds a
// NUL, or is (or can become, expanded for `job`'s tasks) longer than
// kMaxStepInputPattern.
absl::Status CheckStepInput(const v1::StepInput& input,
                            const v1::JobRecord& job, uint32_t task_count);

// Sets task `task`'s stdin in `rank`: the caller's stream for the tasks
// that read it, the pattern expanded for the task (its node `node`, the
// job's names) for per-task files; nothing (/dev/null) otherwise.
void SetStepTaskInput(const v1::StepInput& input, const v1::JobRecord& job,
                      const v1::StepRecord& step, const std::string& node,
                      uint32_t task, v1::RankLaunch& rank);

}  // namespace gantry
