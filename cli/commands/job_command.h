// `gantry job` (scontrol show job): one job's whole record, in scontrol's
// layout or as JSON, or its batch script; with no id every job in the
// controller's live state, one record each. Returns the process exit code
// and prints errors as "gantry job: error: ...".
#pragma once

#include <string>

#include "cli/command_table.h"

namespace gantry::cli {

struct JobOptions {
  std::string job_id;  // ID or ARRAYID_TASK; empty: every job
  bool json = false;
  bool script = false;    // only the batch script (owner and admins)
  int details = 0;        // scontrol -d: per-node allocation lines
  bool one_line = false;  // scontrol -o: each record on one line
  // Run as scontrol: Slurm's record alone, without Gantry's attempts,
  // steps and history after it.
  bool slurm_only = false;
};

int RunJobCommand(const std::string& controller, const JobOptions& options);

// Adds `gantry job` (scontrol show job) and its options to the command table.
void AddJobCommand(CommandTable& commands);

}  // namespace gantry::cli
