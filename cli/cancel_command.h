// `gantry cancel` (scancel): cancels jobs or sends them a signal. Returns
// the process exit code and prints errors as "gantry cancel: error: ...".
#pragma once

#include <string>
#include <vector>

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
};

int RunCancelCommand(const std::string& controller,
                     const CancelOptions& options);

}  // namespace gantry::cli
