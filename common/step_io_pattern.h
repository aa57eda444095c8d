// srun's -o/-e/-i: where each task's stdout and stderr go and where its
// stdin comes from ("all", "none", a task id, or a filename pattern with
// %j %J %s %t %n %N %u %x %A %a %% and zero padding as in %4t). srun, and
// gantryd for the input files each task opens on its node, expand them.
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gantry {

// The names a pattern is expanded with, for one task.
struct StepIoNames {
  uint64_t job_id = 0;
  uint32_t step_id = 0;
  uint32_t task = 0;
  uint32_t node_index = 0;  // the node's place in the job (%n)
  std::string node;         // %N
  std::string user;         // %u
  std::string job_name;     // %x
};

// One of -o, -e, -i as given.
struct StepIoMode {
  enum class Kind { kAll, kNone, kTask, kFile };
  Kind kind = Kind::kAll;
  uint32_t task = 0;    // kTask
  std::string pattern;  // kFile
};

// "all", "none", a task id (digits), else a filename pattern.
StepIoMode ParseStepIoMode(std::string_view text);

// The file name for one task. A backslash anywhere turns expansion off
// (Slurm's "\\"); unknown %-sequences are kept as they are.
std::string ExpandStepIoPattern(std::string_view pattern,
                                const StepIoNames& names);

// Whether the pattern names a different file per task (%t, %n or %N in
// it, expansion not turned off): Slurm then opens each task's input file
// on the task's node; any other file name is a path on srun's host.
bool StepIoPatternPerTask(std::string_view pattern);

}  // namespace gantry
