// What a tree in the dataset cache really holds, measured by the agent
// itself (root) rather than read from anything in the tree: the cache's
// per-user directories belong to their users, who can write into them, so
// the sizes the cache charges and the proof that a copy is unchanged must
// come from the file system's own metadata.
//
// The walk only reads metadata (fstatat without following links, openat
// with O_NOFOLLOW on each directory, relative to its parent), so a tree its
// owner changes during the walk can make it fail or see a mixture, never
// lead it outside the tree. It is bounded by the dataset bounds of
// dataset_tree.h (depth and entries); past them the figures are a lower
// bound and `bounded` is false.
//
// The fingerprint is a digest of every inode's path, type, size, mode,
// owner, inode number and change time (ctime). The owner of a file can set
// its mtime but not its ctime: any write, truncation, rename, link, chmod
// or new file after a fingerprint was taken changes it. A change made in
// the same timestamp tick as a change the walk saw could keep its ctime, so
// a fingerprint meant to be checked later is taken by MeasureSettledTree,
// once the clock has moved past every change in the tree.
//
// Thread-compatible: functions share no state.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace gantry::agent {

struct TreeMeasure {
  // Disk blocks held (st_blocks), every inode counted once.
  uint64_t allocated_bytes = 0;
  uint64_t file_bytes = 0;  // regular files' sizes
  uint64_t files = 0;       // regular files
  // Only directories, regular files and links (no FIFO, device, socket).
  bool plain = true;
  bool bounded = true;  // false: past the bounds, a lower bound
  std::string fingerprint;
  int64_t newest_change_ns = 0;  // the latest ctime seen
};

// Measures `name` in the directory `dir_fd`: a directory and all below it,
// or any other single inode (never followed if a link). NOT_FOUND when it
// does not exist; UNAVAILABLE when it cannot be read or changes kind
// during the walk.
absl::StatusOr<TreeMeasure> MeasureTree(int dir_fd, const std::string& name);

// The same for a path whose parent directories the user cannot change.
absl::StatusOr<TreeMeasure> MeasureTree(const std::string& path);

// MeasureTree(path), repeated (after a short sleep, for at most about two
// seconds) until the walk started after the newest change time in the
// tree: any later change to it then has a later ctime and shows in the
// fingerprint.
absl::StatusOr<TreeMeasure> MeasureSettledTree(const std::string& path);

}  // namespace gantry::agent
