// Runs a command to completion or a deadline, whichever comes first, and
// keeps the end of what it printed: for the pre-flight's site check and
// gloo all-reduce. The command runs in its own process group, which is
// killed (SIGKILL) at the deadline or when `cancelled` becomes true.
//
// Thread-safe: no shared state; uses posix_spawn, so it is safe from a
// threaded process.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry::agent {

struct BoundedCommandResult {
  bool timed_out = false;  // killed at the deadline (or cancelled)
  int exit_code = 0;       // when it exited
  int signal = 0;          // when a signal ended it
  std::string output;      // stdout and stderr together, the last 64 KiB
};

// `argv[0]` is a path; `environment` is the whole environment. INTERNAL
// when it cannot be started at all.
absl::StatusOr<BoundedCommandResult> RunBoundedCommand(
    const std::vector<std::string>& argv,
    const std::map<std::string, std::string>& environment,
    std::chrono::steady_clock::time_point deadline,
    const std::atomic<bool>& cancelled);

// The process's own environment as a map (for adding to it).
std::map<std::string, std::string> CurrentEnvironment();

}  // namespace gantry::agent
