// File access on behalf of a job's user, with that user's credentials.
//
// The agent runs as root, but what it reads and removes in a job's
// directories must be decided by the job user's permissions: a checkpoint
// marker that is a symbolic link to /etc/shadow, or one in a directory the
// user cannot enter, must stay unread. Each operation here runs in a
// short-lived child process that first becomes the user for good (groups,
// then gid, then uid, real, effective and saved, through direct system
// calls) and only then touches the path; it writes what it read into the
// caller's memory, which it shares (as posix_spawn's child does, without
// a copy of the agent's page tables), while the calling thread waits for
// it to exit. Nothing in the agent's own threads ever changes credentials.
//
// Why a child process and not a per-thread fsuid switch: a child ends when
// it hangs (a FIFO, a stalled NFS or FUSE mount under the user's control):
// its own timer's SIGALRM ends it at the timeout, so no caller waits
// longer; a thread stuck in the kernel as the user could be neither
// stopped nor trusted to switch back. The child is made with clone() and
// no exit signal (a "clone child"), so the rank launcher's reaper, which
// waits for any child, never sees it, and its pid cannot be reused before
// it is reaped here. It runs only system calls (it may not allocate: it
// shares the agent's allocator, whose locks another thread may hold), and
// dies with the thread that started it.
//
// Even as the user the final path component is never followed when it is
// a symbolic link, and only regular files are read (opened non-blocking, so
// a FIFO swapped in after the check cannot block): markers are regular
// files written by the frameworks, and anything else planted in their place
// is refused. An append (Slurm's "*** JOB N ... CANCELLED ***" line in a
// job's output) follows a link, as the job's own open did: only regular
// files are written, and the user's permissions decide which.
//
// Thread-safe: every function may be called from any thread; each call
// blocks its caller for at most its timeout (plus the moment a killed child
// takes to exit).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "agent/launch/rank_identity.h"

namespace gantry::agent {

struct SmallFile {
  std::string text;      // the whole file
  int64_t mtime_ns = 0;  // last modification, ns since the epoch
};

// Reads the regular file at `path` as `user` (as the agent itself when
// user.switch_user is false). nullopt when it does not exist.
// Errors, each naming the path and the user:
//   INVALID_ARGUMENT: a symbolic link, not a regular file, or larger than
//     `max_bytes`;
//   PERMISSION_DENIED: the user may not read it (or a directory above it);
//   DEADLINE_EXCEEDED: not read within `timeout` (the child is ended);
//   UNAVAILABLE: any other failure (the system's reason is given).
absl::StatusOr<std::optional<SmallFile>> ReadSmallFileAsUser(
    const RankIdentity& user, const std::string& path, size_t max_bytes,
    std::chrono::milliseconds timeout);

// Removes everything inside the directory `path` as `user`, without
// following symbolic links; the directory itself stays (its parent is
// usually the agent's). Depth is limited to kMaxRemoveDepth levels.
// Errors: PERMISSION_DENIED, DEADLINE_EXCEEDED, UNAVAILABLE as above;
// INVALID_ARGUMENT when `path` is a symbolic link or not a directory, or
// the tree is deeper than the limit.
inline constexpr int kMaxRemoveDepth = 32;
absl::Status RemoveDirectoryContentsAsUser(const RankIdentity& user,
                                           const std::string& path,
                                           std::chrono::milliseconds timeout);

// Appends `text` to the existing regular file at `path` as `user` (as the
// agent itself when user.switch_user is false), with one write in append
// mode, so a line lands whole after whatever the job wrote. Unlike a read,
// a symbolic link is followed (the job's own output file may be one): the
// user's permissions decide where it leads, so a link the user planted to
// a file only root may write fails as the user would. Nothing is created.
// Errors, each naming the path and the user:
//   NOT_FOUND: there is no such file;
//   INVALID_ARGUMENT: not a regular file (a FIFO, a device, a directory);
//   PERMISSION_DENIED: the user may not write it (or reach it);
//   DEADLINE_EXCEEDED: not done within `timeout` (the child is ended);
//   UNAVAILABLE: any other failure, or fewer bytes written than given.
absl::Status AppendToFileAsUser(const RankIdentity& user,
                                const std::string& path, std::string_view text,
                                std::chrono::milliseconds timeout);

// What a child sends back: a fixed header, then (for a read) the bytes.
// Exposed for tests of the parent's side.
enum class UserFileOutcome : int32_t {
  kRead = 1,
  kAbsent,
  kRemoved,
  kAppended,
  kSymlink,
  kNotRegular,
  kNotDirectory,
  kTooBig,
  kTooDeep,
  kCredentials,  // the child could not become the user
  kFailed,       // errno says why
};

struct UserFileReplyHeader {
  int32_t outcome = 0;  // a UserFileOutcome
  int32_t error = 0;    // errno, for kCredentials and kFailed
  int64_t mtime_ns = 0;
  int64_t size = 0;  // bytes that follow (kRead), or the file's size
};

// The result of a read from the child's reply (`reply`: everything it
// wrote). A short or inconsistent reply is UNAVAILABLE.
absl::StatusOr<std::optional<SmallFile>> InterpretReadReply(
    std::string_view reply, const std::string& path, const RankIdentity& user,
    size_t max_bytes);

// The result of an append from the child's reply.
absl::Status InterpretAppendReply(std::string_view reply,
                                  const std::string& path,
                                  const RankIdentity& user, size_t length);

// The result of a removal from the child's reply.
absl::Status InterpretRemoveReply(std::string_view reply,
                                  const std::string& path,
                                  const RankIdentity& user);

}  // namespace gantry::agent
