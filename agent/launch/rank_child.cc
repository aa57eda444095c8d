#include "agent/launch/rank_child.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"

namespace gantry::agent {
namespace {

// Moves the calling process into the cgroup whose cgroup.procs is `path`
// ("0": the writer itself).
bool JoinCgroup(const char* path) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool joined = ::write(fd, "0", 1) == 1;
  int error = errno;
  ::close(fd);
  errno = error;
  return joined;
}

// The kernel's credential calls, made directly. glibc's setuid family
// changes every thread of the process it believes it is in; in a vfork
// child that list is the agent's threads, whose credentials must not move.
// A direct system call changes only the calling (child) process.
int SetGroups(size_t count, const gid_t* groups) {
  return static_cast<int>(::syscall(SYS_setgroups, count, groups));
}
int SetResGid(gid_t gid) {
  return static_cast<int>(::syscall(SYS_setresgid, gid, gid, gid));
}
int SetResUid(uid_t uid) {
  return static_cast<int>(::syscall(SYS_setresuid, uid, uid, uid));
}
// Would raising the effective uid (or gid) to 0 work? It changes nothing
// when it fails, and the rank is not started if it succeeds.
bool CanRegainRoot(gid_t gid) {
  return ::syscall(SYS_setresuid, -1, 0, -1) == 0 ||
         (gid != 0 && ::syscall(SYS_setresgid, -1, 0, -1) == 0) ||
         SetGroups(0, nullptr) == 0;
}

// The rank starts as a program started from a login shell would: every
// signal at its default disposition. Handlers the agent installed must not
// run in the child, which shares its memory until exec; and what the agent
// ignores (SIGINT and SIGQUIT when it was started in the background by a
// non-interactive shell, SIGPIPE) must not be inherited through exec, or
// Ctrl-C in a pty task does nothing. Signals are blocked across vfork, and
// the mask is cleared only just before exec.
void ResetSignalDispositions() {
  for (int signal = 1; signal < NSIG; ++signal) {
    struct sigaction current {};
    if (::sigaction(signal, nullptr, &current) != 0) continue;
    if (current.sa_handler == SIG_DFL) continue;
    struct sigaction reset {};
    reset.sa_handler = SIG_DFL;
    ::sigaction(signal, &reset, nullptr);
  }
}

// Becomes the job's user for good: groups, then gid, then uid (the order in
// which each step still has the privilege the next needs), real, effective
// and saved ids alike, then proves that root cannot be had back. Returns
// the step that failed, or nullopt.
std::optional<RankChildStep> DropPrivileges(const RankIdentity& identity) {
  if (identity.switch_user) {
    if (SetGroups(identity.groups.size(), identity.groups.data()) != 0 ||
        SetResGid(identity.gid) != 0 || SetResUid(identity.uid) != 0) {
      return RankChildStep::kIdentity;
    }
    uid_t ruid = 0, euid = 0, suid = 0;
    gid_t rgid = 0, egid = 0, sgid = 0;
    if (::getresuid(&ruid, &euid, &suid) != 0 ||
        ::getresgid(&rgid, &egid, &sgid) != 0 || ruid != identity.uid ||
        euid != identity.uid || suid != identity.uid || rgid != identity.gid ||
        egid != identity.gid || sgid != identity.gid) {
      errno = EPERM;
      return RankChildStep::kIdentity;
    }
    // Each of these succeeds only with a capability left over.
    if (identity.uid != 0 && CanRegainRoot(identity.gid)) {
      errno = 0;
      return RankChildStep::kPrivilegesKept;
    }
  }
  // setuid-root and file-capability programs (su, sudo, ping) cannot raise
  // the rank's privileges either.
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return RankChildStep::kNoNewPrivileges;
  }
  return std::nullopt;
}

// A connection to the step's gantry run that starts with `header`; -1 on
// failure (errno set).
int ConnectStepIo(const RankChildPlan& plan, const char* header) {
  int fd = ::socket(plan.io_address->ss_family, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(plan.io_address),
                plan.io_address_length) != 0) {
    int error = errno;
    ::close(fd);
    errno = error;
    return -1;
  }
  const size_t length = std::strlen(header);
  if (::write(fd, header, length) != static_cast<ssize_t>(length)) {
    int error = errno;
    ::close(fd);
    errno = error;
    return -1;
  }
  return fd;
}

void WriteText(int fd, const char* text) {
  ssize_t ignored = ::write(fd, text, std::strlen(text));
  (void)ignored;
}

// What the task's stderr says when its program cannot be executed (the
// output is open by then). Fixed strings only: strerror may allocate.
void SayExecFailed(const RankChildPlan& plan, int error) {
  if (plan.exec_candidates == nullptr) {
    WriteText(2,
              "gantry: cannot execute the batch script (gantry job ID says "
              "why)\n");
    return;
  }
  WriteText(2, "gantry: ");
  WriteText(2, plan.argv[0]);
  WriteText(2, error == ENOENT ? ": command not found\n"
               : error == EACCES
                   ? ": permission denied\n"
                   : ": cannot execute (gantry job ID says why)\n");
}

[[noreturn]] void Fail(const RankChildPlan& plan, RankChildStep step) {
  int message[2] = {static_cast<int>(step), errno};
  if (step == RankChildStep::kExec) SayExecFailed(plan, message[1]);
  ssize_t ignored = ::write(plan.report_fd, message, sizeof message);
  (void)ignored;
  ::_exit(127);
}

// execvp's search over the prepared candidates: a missing file or
// directory moves on to the next, a denied one too but is remembered, any
// other error stops the search.
[[noreturn]] void ExecCommand(const RankChildPlan& plan) {
  if (plan.exec_candidates == nullptr) {
    ::execve(plan.argv[0], plan.argv, plan.envp);
    Fail(plan, RankChildStep::kExec);
  }
  bool denied = false;
  for (char* const* candidate = plan.exec_candidates; *candidate != nullptr;
       ++candidate) {
    ::execve(*candidate, plan.argv, plan.envp);
    switch (errno) {
      case ENOEXEC:
        plan.shell_argv[1] = *candidate;
        ::execve("/bin/sh", plan.shell_argv, plan.envp);
        Fail(plan, RankChildStep::kExec);
      case EACCES:
        denied = true;
        break;
      case ENOENT:
      case ENOTDIR:
      case ESTALE:
      case ENODEV:
      case ETIMEDOUT:
        break;
      default:
        Fail(plan, RankChildStep::kExec);
    }
  }
  errno = denied ? EACCES : ENOENT;
  Fail(plan, RankChildStep::kExec);
}

}  // namespace

void ExecRankChild(const RankChildPlan& plan) {
  // getpid() through the kernel: this process's own pid, whatever a
  // library may have cached for the parent.
  FillTaskPid(plan.task_pid, static_cast<pid_t>(::syscall(SYS_getpid)));
  ResetSignalDispositions();
  ::setsid();
  // A rank dies with its agent (kill -9 included): the agent is the only
  // one who could report it, so it must not run on unwatched. Processes
  // the rank started are killed when the agent restarts (see
  // RankLauncher::CleanUpLeftovers).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // Into the job's cgroup while still root (the user may not move
  // processes between cgroups, so neither the rank nor anything it starts
  // can leave it).
  if (plan.cgroup_procs != nullptr && !JoinCgroup(plan.cgroup_procs)) {
    Fail(plan, RankChildStep::kCgroup);
  }
  // Drop to the job's user before touching any path, so the user's
  // permissions, not root's, decide what the job may open.
  if (std::optional<RankChildStep> failed = DropPrivileges(*plan.identity)) {
    Fail(plan, *failed);
  }
  if (::chdir(plan.working_dir) != 0) Fail(plan, RankChildStep::kWorkingDir);
  int out_fd = -1;
  int err_fd = -1;
  int in_fd = -1;
  if (plan.pty_slave != nullptr) {
    // A session leader without a terminal: the first one it opens becomes
    // its controlling terminal (TIOCSCTTY makes sure).
    out_fd = ::open(plan.pty_slave, O_RDWR);
    if (out_fd < 0 || ::ioctl(out_fd, TIOCSCTTY, 0) != 0) {
      Fail(plan, RankChildStep::kPty);
    }
    err_fd = out_fd;
    in_fd = out_fd;
  } else if (plan.io_address != nullptr) {
    out_fd = ConnectStepIo(plan, plan.io_out_header);
    if (out_fd < 0) Fail(plan, RankChildStep::kStepIo);
    err_fd = ConnectStepIo(plan, plan.io_err_header);
    if (err_fd < 0) Fail(plan, RankChildStep::kStepIo);
  } else {
    const int open_flags =
        O_WRONLY | O_CREAT | O_APPEND | (plan.truncate_output ? O_TRUNC : 0);
    out_fd = ::open(plan.output_path, open_flags, 0644);
    if (out_fd < 0) Fail(plan, RankChildStep::kOutput);
    err_fd = out_fd;
    if (plan.error_path != nullptr) {
      err_fd = ::open(plan.error_path, open_flags, 0644);
      if (err_fd < 0) Fail(plan, RankChildStep::kError);
    }
  }
  if (in_fd < 0 && plan.io_in_header != nullptr && plan.io_address != nullptr) {
    in_fd = ConnectStepIo(plan, plan.io_in_header);
    if (in_fd < 0) Fail(plan, RankChildStep::kStepInput);
  } else if (in_fd < 0 && plan.input_path != nullptr) {
    in_fd = ::open(plan.input_path, O_RDONLY | O_NONBLOCK);
    if (in_fd < 0) Fail(plan, RankChildStep::kInput);
    struct stat status {};
    if (::fstat(in_fd, &status) == 0 && S_ISDIR(status.st_mode)) {
      errno = EISDIR;
      Fail(plan, RankChildStep::kInput);
    }
    ::fcntl(in_fd, F_SETFL, ::fcntl(in_fd, F_GETFL) & ~O_NONBLOCK);
  }
  if (in_fd < 0) in_fd = ::open("/dev/null", O_RDONLY);
  if (in_fd >= 0) ::dup2(in_fd, 0);
  ::dup2(out_fd, 1);
  ::dup2(err_fd, 2);
  // Nothing the agent has open (its gRPC sockets, other jobs' files)
  // reaches the rank. The report pipe (close-on-exec) stays open until
  // exec.
  for (int fd = 3; fd < plan.report_fd; ++fd) ::close(fd);
  ::syscall(SYS_close_range, static_cast<unsigned>(plan.report_fd) + 1, ~0U,
            0U);
  sigset_t all;
  sigemptyset(&all);
  ::sigprocmask(SIG_SETMASK, &all, nullptr);
  ExecCommand(plan);
}

std::string DescribeRankChildFailure(RankChildStep step, int error,
                                     const RankChildPlan& plan) {
  const char* reason = std::strerror(error);
  const RankIdentity& identity = *plan.identity;
  switch (step) {
    case RankChildStep::kCgroup:
      return absl::StrCat("cannot join the job's cgroup (", plan.cgroup_procs,
                          "): ", reason);
    case RankChildStep::kIdentity:
      return absl::StrCat("cannot switch to user ", identity.user, " (uid ",
                          identity.uid, ", gid ", identity.gid, "): ", reason);
    case RankChildStep::kPrivilegesKept:
      return absl::StrCat("after switching to user ", identity.user, " (uid ",
                          identity.uid,
                          ") the rank could still regain root; not started");
    case RankChildStep::kNoNewPrivileges:
      return absl::StrCat("cannot set no_new_privs: ", reason);
    case RankChildStep::kWorkingDir:
      return absl::StrCat("cannot use working directory ", plan.working_dir,
                          ": ", reason);
    case RankChildStep::kOutput:
      return absl::StrCat("cannot open output file ", plan.output_path, ": ",
                          reason);
    case RankChildStep::kError:
      return absl::StrCat("cannot open error file ", plan.error_path, ": ",
                          reason);
    case RankChildStep::kExec:
      return absl::StrCat("cannot execute ", plan.argv[0], ": ", reason);
    case RankChildStep::kPty:
      return absl::StrCat("cannot open the task's pseudo-terminal ",
                          plan.pty_slave, ": ", reason);
    case RankChildStep::kInput:
      return absl::StrCat("cannot open input file ", plan.input_path, ": ",
                          reason);
    case RankChildStep::kStepInput:
      return absl::StrCat(
          "cannot connect the task's stdin to the waiting gantry run: ",
          reason);
    case RankChildStep::kStepIo:
      return absl::StrCat(
          "cannot send the task's output to the waiting gantry run: ", reason);
  }
  return reason;
}

}  // namespace gantry::agent
