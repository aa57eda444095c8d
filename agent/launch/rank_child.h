// What a rank's process does between fork and exec: join the job's cgroup,
// become the job's user for good, open its files, close everything else,
// exec the script; and, when a step fails, report which one to the agent.
//
// The child is started with vfork: it borrows the agent's memory until it
// execs, so it allocates nothing, takes no lock and writes nothing but its
// own stack; everything it needs is prepared by the parent in a
// RankChildPlan (strings, the user's groups, the environment). Credentials
// change through direct system calls (see rank_child.cc). Copying the
// agent's address space for every rank (fork) cost more CPU than the
// rank's own start on a busy node.
#pragma once

#include <sys/socket.h>

#include <string>

#include "agent/launch/rank_identity.h"
#include "agent/launch/task_pid_slot.h"

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
  kPty,
  kInput,
  kStepInput,
};

struct RankChildPlan {
  char* const* argv = nullptr;  // argv[0]: the script
  char* const* envp = nullptr;
  // SLURM_TASK_PID's room in one of envp's strings, which the child fills
  // with its own pid (task_pid_slot.h explains why it may write there).
  TaskPidSlot task_pid;
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
  // srun -i: the task's stdin, a connection to gantry run opened with
  // this header, or else this file, opened as the job's user (a FIFO does
  // not hold up the start). Neither: /dev/null.
  const char* io_in_header = nullptr;
  const char* input_path = nullptr;
  // srun --pty: the slave of the task's pseudo-terminal (step_pty.h),
  // opened as its controlling terminal and its stdin, stdout and stderr;
  // the io connections and files above are not used. Null: none.
  const char* pty_slave = nullptr;
  // A step's command: each path is tried in turn, as execvp does
  // (command_search.h); null: argv[0] is executed as it is.
  char* const* exec_candidates = nullptr;
  // For a candidate that is no executable format (ENOEXEC), /bin/sh runs
  // it, as execvp does: shell_argv[1] is set to the candidate, the rest
  // are argv's arguments.
  char** shell_argv = nullptr;
  // Write end of a close-on-exec pipe: {step, errno} arrives on failure,
  // nothing (end of file) when exec succeeded.
  int report_fd = -1;
};

// In the vfork child, with every signal blocked: execs the rank or reports the
// failed step and exits 127. Never returns.
[[noreturn]] void ExecRankChild(const RankChildPlan& plan);

// In the parent: the failure the child reported, fit for the job's reason.
std::string DescribeRankChildFailure(RankChildStep step, int error,
                                     const RankChildPlan& plan);

}  // namespace gantry::agent
