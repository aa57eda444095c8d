// srun's command line as `gantry run` (and the srun personality) takes it
// inside a job: options up to the first word that is not one, then the
// command. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry::cli {

struct StepOptions {
  uint32_t nodes = 0;  // -N; 0: as the allocation (or the nodelist)
  uint32_t ntasks = 0;
  uint32_t ntasks_per_node = 0;
  uint32_t cpus_per_task = 0;
  uint32_t gpus_per_task = 0;
  std::vector<std::string> nodelist;  // -w, expanded
  bool label = false;                 // -l: "TASK: " before each line
  bool kill_on_bad_exit = false;      // -K
  uint32_t wait_seconds = 0;          // -W
  std::string job_id;                 // --jobid; empty: $SLURM_JOB_ID
  std::vector<std::string> command;
  bool help = false;
  bool version = false;  // -V/--version
};

// INVALID_ARGUMENT naming the option for an unknown one (with the closest
// real one), a missing or malformed value, or no command.
absl::StatusOr<StepOptions> ParseStepOptions(
    const std::vector<std::string>& args);

// The usage text for `gantry run --help` (and srun --help).
const char* StepUsage();

}  // namespace gantry::cli
