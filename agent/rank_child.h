// What a rank's process does between fork and exec: join the job's cgroup,
// become the job's user for good, open its files, close everything else,
// exec the script; and, when a step fails, report which one to the agent.
//
// The child of a threaded process may only make async-signal-safe calls,
// so everything it needs is prepared by the parent in a RankChildPlan
// before fork (strings, the user's groups, the environment).
#pragma once

#include <sys/socket.h>

#include <string>

#include "agent/rank_identity.h"

namespace gantry::agent {

// The step that failed, sent over the report pipe as {step, errno}.
enum class RankChildStep : int {
  kCgroup = 1,
  kIdentity,
  kPrivilegesKept,
  kNoNewPrivileges,
  kWorkingDir,
  kOutput,
  kError,
  kExec,
  kStepIo,
};

struct RankChildPlan {
  char* const* argv = nullptr;  // argv[0]: the script
  char* const* envp = nullptr;
  const char* working_dir = nullptr;
  const char* output_path = nullptr;
  const char* error_path = nullptr;  // null: stderr to the output file
  bool truncate_output = false;      // else appended to
  const char* cgroup_procs =
      nullptr;  // the job cgroup's cgroup.procs; null: none
  const RankIdentity* identity = nullptr;
  // A step task's stdout and stderr: TCP connections to the waiting
  // gantry run, each opened with its header line. Null: the files above.
  const sockaddr_storage* io_address = nullptr;
  socklen_t io_address_length = 0;
  const char* io_out_header = nullptr;
  const char* io_err_header = nullptr;
  // Write end of a close-on-exec pipe: {step, errno} arrives on failure,
  // nothing (end of file) when exec succeeded.
  int report_fd = -1;
};

// In the forked child: execs the rank or reports the failed step and exits
// 127. Never returns.
[[noreturn]] void ExecRankChild(const RankChildPlan& plan);

// In the parent: the failure the child reported, fit for the job's reason.
std::string DescribeRankChildFailure(RankChildStep step, int error,
                                     const RankChildPlan& plan);

}  // namespace gantry::agent
