#include "agent/launch/user_file_access.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace gantry::agent {
namespace {

enum class ChildOperation { kRead, kRemoveContents, kAppend };

// What the child answers, written into the parent's memory (the child
// shares it: see RunAsUser). `bytes` points into ChildTask::buffer.
struct ChildReply {
  UserFileReplyHeader header;
  bool answered = false;
  const char* bytes = nullptr;
  size_t length = 0;
};

// The child's own stack: RemoveContents nests kMaxRemoveDepth levels of a
// 2 KiB buffer, and sanitizer builds grow every frame. Pages never touched
// cost nothing.
constexpr size_t kChildStackBytes = 1 << 20;

// The code the child runs is left uninstrumented by the sanitizers: it runs
// on a stack they do not know of, and makes only system calls.
#define GANTRY_IN_CHILD __attribute__((no_sanitize("address", "undefined")))

// Everything the child needs, prepared by the parent: the child may only
// make system calls (see the header).
struct ChildTask {
  ChildOperation operation = ChildOperation::kRead;
  const RankIdentity* user = nullptr;
  const char* path = nullptr;
  size_t max_bytes = 0;
  char* buffer = nullptr;  // max_bytes + 1 bytes, for a read
  // What an append writes.
  const char* text = nullptr;
  size_t text_length = 0;
  ChildReply* reply = nullptr;
  std::chrono::milliseconds timeout{0};
};

// --- In the child: system calls only. ---

GANTRY_IN_CHILD [[noreturn]] void Reply(const ChildTask& task,
                                        UserFileOutcome outcome, int error = 0,
                                        const struct stat* info = nullptr,
                                        const char* bytes = nullptr,
                                        size_t length = 0) {
  UserFileReplyHeader header;
  header.outcome = static_cast<int32_t>(outcome);
  header.error = error;
  if (info != nullptr) {
    header.mtime_ns =
        int64_t{info->st_mtim.tv_sec} * 1'000'000'000 + info->st_mtim.tv_nsec;
    header.size = info->st_size;
  }
  if (bytes != nullptr) header.size = static_cast<int64_t>(length);
  task.reply->header = header;
  task.reply->bytes = bytes;
  task.reply->length = bytes != nullptr ? length : 0;
  task.reply->answered = true;
  ::_exit(0);
}

// For good: groups, gid, uid (each step still has the privilege the next
// needs), then a check that the real, effective and saved ids all moved.
GANTRY_IN_CHILD bool BecomeUser(const RankIdentity& user) {
  if (!user.switch_user) return true;
  if (::syscall(SYS_setgroups, user.groups.size(), user.groups.data()) != 0 ||
      ::syscall(SYS_setresgid, user.gid, user.gid, user.gid) != 0 ||
      ::syscall(SYS_setresuid, user.uid, user.uid, user.uid) != 0) {
    return false;
  }
  uid_t ruid = 0, euid = 0, suid = 0;
  gid_t rgid = 0, egid = 0, sgid = 0;
  if (::getresuid(&ruid, &euid, &suid) != 0 ||
      ::getresgid(&rgid, &egid, &sgid) != 0 || ruid != user.uid ||
      euid != user.uid || suid != user.uid || rgid != user.gid ||
      egid != user.gid || sgid != user.gid) {
    errno = EPERM;
    return false;
  }
  return true;
}

GANTRY_IN_CHILD [[noreturn]] void ReadInChild(const ChildTask& task) {
  struct stat before {};
  if (::fstatat(AT_FDCWD, task.path, &before, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) Reply(task, UserFileOutcome::kAbsent);
    Reply(task, UserFileOutcome::kFailed, errno);
  }
  if (S_ISLNK(before.st_mode)) Reply(task, UserFileOutcome::kSymlink);
  if (!S_ISREG(before.st_mode)) Reply(task, UserFileOutcome::kNotRegular);
  if (static_cast<uint64_t>(before.st_size) > task.max_bytes) {
    Reply(task, UserFileOutcome::kTooBig, 0, &before);
  }
  // Swapped since the check: O_NOFOLLOW refuses a link, O_NONBLOCK keeps a
  // FIFO from blocking the open, and fstat below refuses what is not a
  // regular file.
  const int fd = ::open(
      task.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ELOOP) Reply(task, UserFileOutcome::kSymlink);
    if (errno == ENOENT) Reply(task, UserFileOutcome::kAbsent);
    Reply(task, UserFileOutcome::kFailed, errno);
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0) Reply(task, UserFileOutcome::kFailed, errno);
  if (!S_ISREG(info.st_mode)) Reply(task, UserFileOutcome::kNotRegular);
  if (static_cast<uint64_t>(info.st_size) > task.max_bytes) {
    Reply(task, UserFileOutcome::kTooBig, 0, &info);
  }
  // One byte more than allowed tells a file that grew since fstat.
  size_t total = 0;
  while (total <= task.max_bytes) {
    ssize_t got = ::read(fd, task.buffer + total, task.max_bytes + 1 - total);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) Reply(task, UserFileOutcome::kFailed, errno);
    if (got == 0) break;
    total += static_cast<size_t>(got);
  }
  if (total > task.max_bytes) Reply(task, UserFileOutcome::kTooBig, 0, &info);
  Reply(task, UserFileOutcome::kRead, 0, &info, task.buffer, total);
}

// getdents64's record.
struct DirectoryEntry64 {
  ino64_t inode;
  off64_t offset;
  unsigned short length;
  unsigned char type;
  char name[];
};

// Empties the directory open as `dir_fd`. Returns 0, or the errno of the
// first failure; sets `too_deep` when a level past kMaxRemoveDepth exists.
GANTRY_IN_CHILD int RemoveContents(int dir_fd, int depth, bool& too_deep) {
  alignas(DirectoryEntry64) char buffer[2048];
  // Entries removed while reading may shift what is returned next: read
  // again from the start until a pass finds nothing (bounded, should the
  // user keep adding files).
  for (int pass = 0; pass < 16; ++pass) {
    if (::lseek(dir_fd, 0, SEEK_SET) != 0) return errno;
    bool found = false;
    while (true) {
      const long got = ::syscall(SYS_getdents64, dir_fd, buffer, sizeof buffer);
      if (got < 0) return errno;
      if (got == 0) break;
      for (long at = 0; at < got;) {
        const auto* entry =
            reinterpret_cast<const DirectoryEntry64*>(buffer + at);
        at += entry->length;
        const char* name = entry->name;
        if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) {
          continue;
        }
        found = true;
        bool is_dir = entry->type == DT_DIR;
        if (entry->type == DT_UNKNOWN) {
          struct stat info {};
          if (::fstatat(dir_fd, name, &info, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno == ENOENT) continue;
            return errno;
          }
          is_dir = S_ISDIR(info.st_mode);
        }
        if (is_dir) {
          if (depth + 1 >= kMaxRemoveDepth) {
            too_deep = true;
            return 0;
          }
          const int child = ::openat(
              dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (child < 0) {
            if (errno == ENOENT) continue;
            return errno;
          }
          const int error = RemoveContents(child, depth + 1, too_deep);
          ::close(child);
          if (error != 0 || too_deep) return error;
        }
        if (::unlinkat(dir_fd, name, is_dir ? AT_REMOVEDIR : 0) != 0 &&
            errno != ENOENT) {
          return errno;
        }
      }
    }
    if (!found) return 0;
  }
  return ENOTEMPTY;
}

GANTRY_IN_CHILD [[noreturn]] void RemoveInChild(const ChildTask& task) {
  const int fd =
      ::open(task.path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) Reply(task, UserFileOutcome::kAbsent);
    if (errno == ELOOP) Reply(task, UserFileOutcome::kSymlink);
    if (errno == ENOTDIR) Reply(task, UserFileOutcome::kNotDirectory);
    Reply(task, UserFileOutcome::kFailed, errno);
  }
  bool too_deep = false;
  const int error = RemoveContents(fd, 0, too_deep);
  if (error != 0) Reply(task, UserFileOutcome::kFailed, error);
  if (too_deep) Reply(task, UserFileOutcome::kTooDeep);
  Reply(task, UserFileOutcome::kRemoved);
}

GANTRY_IN_CHILD [[noreturn]] void AppendInChild(const ChildTask& task) {
  // No O_NOFOLLOW: as the user, a link leads only where the user may write.
  // O_NONBLOCK: a FIFO without a reader fails instead of blocking.
  const int fd = ::open(
      task.path, O_WRONLY | O_APPEND | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) Reply(task, UserFileOutcome::kAbsent);
    if (errno == ENXIO) Reply(task, UserFileOutcome::kNotRegular);
    Reply(task, UserFileOutcome::kFailed, errno);
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0) Reply(task, UserFileOutcome::kFailed, errno);
  if (!S_ISREG(info.st_mode)) Reply(task, UserFileOutcome::kNotRegular);
  // One write: with O_APPEND the kernel places it whole at the end.
  ssize_t written = 0;
  do {
    written = ::write(fd, task.text, task.text_length);
  } while (written < 0 && errno == EINTR);
  if (written < 0) Reply(task, UserFileOutcome::kFailed, errno);
  struct stat after {};
  after.st_size = written;
  Reply(task, UserFileOutcome::kAppended, 0, &after);
}

GANTRY_IN_CHILD [[noreturn]] void RunChild(const ChildTask& task) {
  // Nothing of the agent's (its sockets, other jobs' files) stays open in
  // a process that runs as the user (the descriptor table is the child's
  // own copy).
  ::syscall(SYS_close_range, 3U, ~0U, 0U);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The timeout: the child's own timer, whose signal ends it wherever it
  // waits that a signal can end a wait (a FIFO, an NFS or FUSE mount).
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  ::sigaction(SIGALRM, &default_action, nullptr);
  sigset_t alarm_only;
  ::sigemptyset(&alarm_only);
  ::sigaddset(&alarm_only, SIGALRM);
  ::sigprocmask(SIG_UNBLOCK, &alarm_only, nullptr);
  const int64_t timeout_us = task.timeout.count() * 1000;
  struct itimerval timer {};
  timer.it_value.tv_sec = static_cast<time_t>(timeout_us / 1'000'000);
  timer.it_value.tv_usec = static_cast<suseconds_t>(timeout_us % 1'000'000);
  if (timeout_us <= 0) timer.it_value.tv_usec = 1;
  ::setitimer(ITIMER_REAL, &timer, nullptr);
  if (!BecomeUser(*task.user)) {
    Reply(task, UserFileOutcome::kCredentials, errno);
  }
  if (task.operation == ChildOperation::kRead) ReadInChild(task);
  if (task.operation == ChildOperation::kAppend) AppendInChild(task);
  RemoveInChild(task);
}

// --- In the parent. ---

std::string DescribeUser(const RankIdentity& user) {
  if (!user.switch_user) return "the agent's own user";
  if (user.user.empty()) return absl::StrCat("uid ", user.uid);
  return absl::StrCat("user ", user.user, " (uid ", user.uid, ")");
}

GANTRY_IN_CHILD int ChildMain(void* task) {
  RunChild(*static_cast<const ChildTask*>(task));
}

// Runs `task` in a child as its user; returns its answer as the header and
// then (for a read) the bytes, "" when it ended without one.
//
// The child shares the agent's memory (CLONE_VM), on a stack of its own,
// and this thread waits until it has exited (CLONE_VFORK), as posix_spawn
// does: a fork-style copy of the agent's page tables, and the copy-on-write
// faults every agent thread then took on its own memory, cost more than
// the job it cleaned up after on a busy node. Sharing is safe because the
// child makes only system calls, writes only its answer, and its thread's
// locals (errno) are those of this thread, which is stopped meanwhile;
// credentials and the descriptor table are the child's own.
absl::StatusOr<std::string> RunAsUser(ChildTask task,
                                      std::chrono::milliseconds timeout) {
  void* stack = ::mmap(nullptr, kChildStackBytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) {
    return absl::UnavailableError(
        absl::StrCat("cannot map a stack for the process acting as the user: ",
                     std::strerror(errno)));
  }
  ChildReply reply;
  task.reply = &reply;
  task.timeout = timeout;
  // No handler of the agent's may run in the child.
  sigset_t all_signals;
  sigset_t previous_mask;
  sigfillset(&all_signals);
  ::pthread_sigmask(SIG_SETMASK, &all_signals, &previous_mask);
  // No exit signal (a "clone child"): see the header.
  const int pid =
      ::clone(ChildMain, static_cast<char*>(stack) + kChildStackBytes,
              CLONE_VM | CLONE_VFORK, &task);
  const int clone_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);
  if (pid < 0) {
    ::munmap(stack, kChildStackBytes);
    return absl::UnavailableError(
        absl::StrCat("cannot start a process to act as the user: ",
                     std::strerror(clone_errno)));
  }
  int status = 0;
  while (::waitpid(pid, &status, __WCLONE) < 0 && errno == EINTR) {
  }
  ::munmap(stack, kChildStackBytes);
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
    return absl::DeadlineExceededError(
        absl::StrCat("gave up after ", timeout.count(), " ms"));
  }
  if (!reply.answered) return std::string();
  std::string answer(reinterpret_cast<const char*>(&reply.header),
                     sizeof reply.header);
  if (reply.bytes != nullptr) answer.append(reply.bytes, reply.length);
  return answer;
}

std::string ErrorText(int error) { return std::strerror(error); }

// The status for the outcomes reads and removals share.
absl::Status CommonFailure(const UserFileReplyHeader& header,
                           const std::string& path, const std::string& who,
                           const char* verb) {
  switch (static_cast<UserFileOutcome>(header.outcome)) {
    case UserFileOutcome::kSymlink:
      return absl::InvalidArgumentError(absl::StrCat(
          path, " is a symbolic link, which is not followed (", who, ")"));
    case UserFileOutcome::kCredentials:
      return absl::UnavailableError(absl::StrCat("cannot become ", who, " to ",
                                                 verb, " ", path, ": ",
                                                 ErrorText(header.error)));
    case UserFileOutcome::kFailed:
      if (header.error == EACCES || header.error == EPERM) {
        return absl::PermissionDeniedError(absl::StrCat(
            who, " may not ", verb, " ", path, ": ", ErrorText(header.error)));
      }
      return absl::UnavailableError(absl::StrCat("cannot ", verb, " ", path,
                                                 " as ", who, ": ",
                                                 ErrorText(header.error)));
    default:
      return absl::UnavailableError(absl::StrCat(
          "unexpected answer ", header.outcome,
          " from the process that was to ", verb, " ", path, " as ", who));
  }
}

bool ReadHeader(std::string_view reply, UserFileReplyHeader& header) {
  if (reply.size() < sizeof header) return false;
  std::memcpy(&header, reply.data(), sizeof header);
  return true;
}

}  // namespace

absl::StatusOr<std::optional<SmallFile>> InterpretReadReply(
    std::string_view reply, const std::string& path, const RankIdentity& user,
    size_t max_bytes) {
  const std::string who = DescribeUser(user);
  UserFileReplyHeader header;
  if (!ReadHeader(reply, header)) {
    return absl::UnavailableError(absl::StrCat("the process that was to read ",
                                               path, " as ", who,
                                               " ended without an answer"));
  }
  const std::string_view bytes = reply.substr(sizeof header);
  switch (static_cast<UserFileOutcome>(header.outcome)) {
    case UserFileOutcome::kRead:
      if (header.size < 0 || static_cast<uint64_t>(header.size) > max_bytes ||
          static_cast<uint64_t>(header.size) != bytes.size()) {
        return absl::UnavailableError(
            absl::StrCat("the process that read ", path, " as ", who, " sent ",
                         bytes.size(), " bytes of the ", header.size,
                         " it announced (at most ", max_bytes, ")"));
      }
      return std::optional<SmallFile>(
          SmallFile{std::string(bytes), header.mtime_ns});
    case UserFileOutcome::kAbsent:
      return std::optional<SmallFile>();
    case UserFileOutcome::kNotRegular:
      return absl::InvalidArgumentError(
          absl::StrCat(path, " is not a regular file (", who, ")"));
    case UserFileOutcome::kTooBig:
      return absl::InvalidArgumentError(
          absl::StrCat(path, " is larger than the ", max_bytes,
                       " bytes allowed (", who, ")"));
    default:
      return CommonFailure(header, path, who, "read");
  }
}

absl::Status InterpretRemoveReply(std::string_view reply,
                                  const std::string& path,
                                  const RankIdentity& user) {
  const std::string who = DescribeUser(user);
  UserFileReplyHeader header;
  if (!ReadHeader(reply, header) || reply.size() != sizeof header) {
    return absl::UnavailableError(absl::StrCat("the process that was to empty ",
                                               path, " as ", who,
                                               " ended without an answer"));
  }
  switch (static_cast<UserFileOutcome>(header.outcome)) {
    case UserFileOutcome::kRemoved:
    case UserFileOutcome::kAbsent:
      return absl::OkStatus();
    case UserFileOutcome::kNotDirectory:
      return absl::InvalidArgumentError(
          absl::StrCat(path, " is not a directory (", who, ")"));
    case UserFileOutcome::kTooDeep:
      return absl::InvalidArgumentError(
          absl::StrCat(path, " holds directories more than ", kMaxRemoveDepth,
                       " levels deep; left in place (", who, ")"));
    default:
      return CommonFailure(header, path, who, "empty");
  }
}

absl::Status InterpretAppendReply(std::string_view reply,
                                  const std::string& path,
                                  const RankIdentity& user, size_t length) {
  const std::string who = DescribeUser(user);
  UserFileReplyHeader header;
  if (!ReadHeader(reply, header) || reply.size() != sizeof header) {
    return absl::UnavailableError(
        absl::StrCat("the process that was to append to ", path, " as ", who,
                     " ended without an answer"));
  }
  switch (static_cast<UserFileOutcome>(header.outcome)) {
    case UserFileOutcome::kAppended:
      if (header.size != static_cast<int64_t>(length)) {
        return absl::UnavailableError(
            absl::StrCat("only ", header.size, " of ", length,
                         " bytes were appended to ", path, " (", who, ")"));
      }
      return absl::OkStatus();
    case UserFileOutcome::kAbsent:
      return absl::NotFoundError(
          absl::StrCat(path, " does not exist (", who, ")"));
    case UserFileOutcome::kNotRegular:
      return absl::InvalidArgumentError(
          absl::StrCat(path, " is not a regular file (", who, ")"));
    default:
      return CommonFailure(header, path, who, "append to");
  }
}

absl::StatusOr<std::optional<SmallFile>> ReadSmallFileAsUser(
    const RankIdentity& user, const std::string& path, size_t max_bytes,
    std::chrono::milliseconds timeout) {
  std::string buffer(max_bytes + 1, '\0');
  ChildTask task;
  task.operation = ChildOperation::kRead;
  task.user = &user;
  task.path = path.c_str();
  task.max_bytes = max_bytes;
  task.buffer = buffer.data();
  absl::StatusOr<std::string> reply = RunAsUser(task, timeout);
  if (!reply.ok()) {
    return absl::Status(
        reply.status().code(),
        absl::StrCat("reading ", path, " as ", DescribeUser(user), ": ",
                     reply.status().message()));
  }
  return InterpretReadReply(*reply, path, user, max_bytes);
}

absl::Status RemoveDirectoryContentsAsUser(const RankIdentity& user,
                                           const std::string& path,
                                           std::chrono::milliseconds timeout) {
  ChildTask task;
  task.operation = ChildOperation::kRemoveContents;
  task.user = &user;
  task.path = path.c_str();
  absl::StatusOr<std::string> reply = RunAsUser(task, timeout);
  if (!reply.ok()) {
    return absl::Status(
        reply.status().code(),
        absl::StrCat("emptying ", path, " as ", DescribeUser(user), ": ",
                     reply.status().message()));
  }
  return InterpretRemoveReply(*reply, path, user);
}

absl::Status AppendToFileAsUser(const RankIdentity& user,
                                const std::string& path, std::string_view text,
                                std::chrono::milliseconds timeout) {
  ChildTask task;
  task.operation = ChildOperation::kAppend;
  task.user = &user;
  task.path = path.c_str();
  task.text = text.data();
  task.text_length = text.size();
  absl::StatusOr<std::string> reply = RunAsUser(task, timeout);
  if (!reply.ok()) {
    return absl::Status(
        reply.status().code(),
        absl::StrCat("appending to ", path, " as ", DescribeUser(user), ": ",
                     reply.status().message()));
  }
  return InterpretAppendReply(*reply, path, user, text.size());
}

}  // namespace gantry::agent

#undef GANTRY_IN_CHILD  // a unity build goes on with other files
