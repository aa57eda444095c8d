// `gantry queue` (squeue): the jobs a user asks about, one line each in
// squeue's layout or as JSON; with -s their running steps; with -i again
// every few seconds. Returns the process exit code and prints errors as
// "gantry queue: error: ...".
//
// Reads squeue's environment variables where the option is not given:
// SQUEUE_FORMAT (-o), SQUEUE_FORMAT2 (-O), SQUEUE_SORT (-S),
// SQUEUE_PARTITION (-p), SQUEUE_STATES (-t), SQUEUE_USERS (-u),
// SQUEUE_NAMES (-n), SQUEUE_ACCOUNT (-A).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/command_table.h"

namespace gantry::cli {

// squeue's selection and layout. List options take comma-separated values
// and may be repeated.
struct QueueOptions {
  bool all = false;  // include finished jobs
  std::vector<std::string> users;
  bool me = false;  // --me: the caller's jobs
  std::vector<std::string> job_ids;
  std::vector<std::string> partitions;
  std::vector<std::string> states;  // names or short forms, or "all"
  std::vector<std::string> names;
  std::vector<std::string> accounts;
  std::vector<std::string> qos;
  std::vector<std::string> nodelists;  // hostlist expressions
  std::string format;                  // squeue %-fields; empty: the default
  std::string fields;                  // -O names
  std::string sort;                    // -S keys
  bool long_format = false;            // -l
  bool start = false;                  // --start
  // -s: running steps instead of jobs; the list (JOBID.STEPID, ...) may be
  // empty for all.
  std::optional<std::vector<std::string>> steps;
  int iterate_seconds = 0;  // -i: again every N seconds until interrupted
  bool no_header = false;
  bool json = false;
  bool verbose = false;
  bool array_unfolded = false;  // -r: every array task on its own line
};

int RunQueueCommand(const std::string& controller, const QueueOptions& options);

// Adds `gantry queue` (squeue) and its options to the command table.
void AddQueueCommand(CommandTable& commands);

}  // namespace gantry::cli
