// The files of one in-memory checkpoint snapshot (a "step" directory), read
// and written by descriptor only, because the agent (root) handles trees a
// user wrote:
//  - Listing a step walks it with openat(O_NOFOLLOW) from a directory
//    descriptor and takes only directories and regular files owned by the
//    expected user with a single link. A symbolic link, a hard link, a
//    device, a FIFO or another user's file anywhere in it refuses the whole
//    snapshot: copying it would hand the user (on another node) something
//    they could not read themselves.
//  - Writing a received snapshot creates every file and directory anew
//    (O_EXCL) under a directory the agent made, from relative paths that
//    are checked first (no "..", no absolute path, bounded depth and
//    length).
// Thread-safe: functions of their arguments.
#pragma once

#include <fcntl.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gantry::agent {

inline constexpr size_t kMaxSnapshotFiles = 4096;
// How every directory of a snapshot tree is opened: never through a link.
inline constexpr int kSnapshotDirectoryFlags =
    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
inline constexpr size_t kMaxSnapshotPathLength = 512;
inline constexpr size_t kMaxSnapshotDepth = 16;

struct SnapshotFile {
  std::string path;  // relative to the step directory, '/'-separated
  uint64_t bytes = 0;
};

struct SnapshotListing {
  std::vector<SnapshotFile> files;  // directories are implied by the paths
  uint64_t bytes = 0;
};

// OK for a relative path a snapshot may hold; INVALID_ARGUMENT naming what
// is wrong otherwise.
absl::Status CheckSnapshotPath(absl::string_view path);

// Lists the step directory `step_fd` (opened O_DIRECTORY|O_NOFOLLOW by the
// caller), whose every entry must belong to `owner`.
// Errors: FAILED_PRECONDITION for what may not be copied (naming it);
// RESOURCE_EXHAUSTED past kMaxSnapshotFiles; UNAVAILABLE for a failing
// system call.
absl::StatusOr<SnapshotListing> ListSnapshot(int step_fd, uid_t owner);

// Opens `file.path` below `step_fd` for reading, by descriptor at every
// level, and checks that it is still the regular file of `owner` with
// `file.bytes` bytes the listing saw. FAILED_PRECONDITION when it changed.
absl::StatusOr<int> OpenSnapshotFile(int step_fd, const SnapshotFile& file,
                                     uid_t owner);

// Creates `path`'s directories below `dir_fd` as needed (mode 0700) and the
// file itself, new (O_EXCL), mode 0600; returns its descriptor.
absl::StatusOr<int> CreateSnapshotFile(int dir_fd, const std::string& path);

// Hands the tree below `dir_fd` (which the agent created) and the
// directory itself to uid:gid.
absl::Status ChownSnapshotTree(int dir_fd, uid_t uid, gid_t gid);

// Removes the tree `name` below `parent_fd` without following any link: a
// tree the agent wrote (replicas, restores that failed). A missing tree is
// not an error.
absl::Status RemoveSnapshotTree(int parent_fd, const std::string& name);

}  // namespace gantry::agent
