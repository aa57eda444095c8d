// srun's command line as `gantry run` (and the srun personality) takes it,
// inside a job or outside one (then it allocates the job first): options up
// to the first word that is not one, then the command. Pure; thread-safe.
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
  // --exact, or --exclusive: the step holds only what its tasks ask for
  // (daemon/launch/step_resources.h); --overlap: it holds nothing.
  bool exact = false;
  bool overlap = false;
  bool pty = false;         // --pty: task 0 on a pseudo-terminal
  std::string output;       // -o as given (step_io_pattern.h)
  std::string error;        // -e
  std::string input;        // -i (step_input_mode.h)
  std::string export_spec;  // --export; empty: ALL
  std::string job_name;     // -J
  bool quiet = false;       // -Q: no informational messages
  // The option words that also describe a job (-N, -n, -c, -p, -t, --mem,
  // -G, --exclusive, ...), in order: srun outside a job allocates one from
  // them (common/job_options.h reads them).
  std::vector<std::string> allocation_words;
  std::vector<std::string> command;
  bool help = false;
  bool version = false;  // -V/--version
};

// INVALID_ARGUMENT naming the option for an unknown one (Slurm's
// "unrecognized option '--x'", with the closest real one), a missing or
// malformed value, a container option (pyxis: not supported), or no
// command. `program` ("srun", "gantry run") is named in hints.
absl::StatusOr<StepOptions> ParseStepOptions(
    const std::vector<std::string>& args,
    const std::string& program = "gantry run");

// The usage text for `gantry run --help` (and srun --help).
const char* StepUsage();

// Pyxis's container options (--container-image and friends): true for one.
bool IsContainerOption(const std::string& long_name);

}  // namespace gantry::cli
