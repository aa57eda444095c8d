// `gantry progress` and `gantry checkpoint`, from inside a job: report
// progress (which resets --hang-timeout), or a completed checkpoint that a
// restart resumes from (GANTRY_RESUME_FROM). Returns the process exit code
// and prints errors as "gantry progress: error: ..." (or "gantry
// checkpoint: ...").
//
// Run by one rank with --step, the report is also that rank's, for its
// node's progress (the straggler check, docs/user-guide.md "Stragglers"): the
// rank is
// --rank, else SLURM_PROCID, else RANK from the environment.
#pragma once

#include <cstdint>
#include <string>

#include "cli/command_table.h"

namespace gantry::cli {

// From inside a job (GANTRY_JOB_ID) or for --job: a completed checkpoint
// (`path` non-empty) or plain progress.
// `step_seconds` (< 0: not given): how long the rank's last step took;
// `rank` (< 0: from the environment).
int RunProgressCommand(const std::string& controller, const std::string& job,
                       const std::string& path, int64_t step,
                       double step_seconds = -1, int64_t rank = -1);

// Adds `gantry checkpoint` and `gantry progress`, run from inside a job to the
// command table.
void AddProgressCommands(CommandTable& commands);

}  // namespace gantry::cli
