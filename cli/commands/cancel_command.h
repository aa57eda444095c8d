// `gantry cancel` (scancel): cancels jobs or sends them a signal. Returns
// the process exit code and prints errors as "gantry cancel: error: ...".
// SCANCEL_INTERACTIVE and SCANCEL_VERBOSE set -i and -v, as for scancel.
#pragma once

#include <string>
#include <vector>

#include "cli/command_table.h"

namespace gantry::cli {

// scancel: the jobs named, narrowed by the filters; with no ids, every job of
// the filters' users (default: the caller) that is pending or running.
struct CancelOptions {
  std::vector<std::string> job_ids;
  std::vector<std::string> users;
  std::vector<std::string> names;
  std::vector<std::string> states;
  std::string signal;  // non-empty: send it to the running ranks instead
  bool batch = false;  // -b: the signal to the batch script alone
  bool full = false;   // -f: to every process of the job
  bool me = false;     // --me: the caller's jobs
  std::vector<std::string> partitions;  // -p
  std::vector<std::string> nodelists;   // -w: jobs on these nodes
  std::vector<std::string> accounts;    // -A (Gantry records none)
  std::vector<std::string> qos;         // -q (every job's is normal)
  bool interactive = false;  // -i: ask "[y/n]?" for each job on stdin
  int verbose = 0;           // -v: say what is done to each job
  bool quiet = false;        // -Q: no error for jobs already gone
};

int RunCancelCommand(const std::string& controller,
                     const CancelOptions& options);

// Adds `gantry cancel` (scancel) and its options to the command table.
void AddCancelCommand(CommandTable& commands);

}  // namespace gantry::cli
