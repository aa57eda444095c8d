// `gantry queue` (squeue): the jobs a user asks about, one line each in
// squeue's layout or as JSON. Returns the process exit code and prints
// errors as "gantry queue: error: ...".
#pragma once

#include <string>
#include <vector>

namespace gantry::cli {

// squeue's selection and layout. List options take comma-separated values
// and may be repeated.
struct QueueOptions {
  bool all = false;  // include finished jobs
  std::vector<std::string> users;
  std::vector<std::string> job_ids;
  std::vector<std::string> partitions;
  std::vector<std::string> states;  // names or short forms, or "all"
  std::string format;               // squeue %-fields; empty: the default
  bool no_header = false;
  bool json = false;
  bool array_unfolded = false;  // -r: every array task on its own line
};

int RunQueueCommand(const std::string& controller, const QueueOptions& options);

}  // namespace gantry::cli
