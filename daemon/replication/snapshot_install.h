// Where a standby puts a copy of the leader's state, and how it takes the
// place of its own database, so that a crash at any moment leaves either
// the old database or the complete copy, never a mixture:
//
//   STATE/db.incoming        the copy, as it arrives
//   STATE/db.incoming.ready  written (and synced) once the copy is complete
//                            and checked: from then on the copy wins
//   STATE/db.replaced        the old database, while the copy moves in
//
// FinishSnapshotInstall runs at gantryd's start, before the database opens:
// it completes an installation a crash interrupted and discards a copy that
// never became ready.
//
// Thread-safe only against other processes' readers; one caller at a time.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gantry::replication {

struct SnapshotPaths {
  explicit SnapshotPaths(const std::string& state_dir);
  std::string state_dir;
  std::string db;
  std::string incoming;
  std::string ready;
  std::string replaced;
};

// Makes an empty `incoming` directory (removing a previous one).
absl::Status PrepareIncoming(const SnapshotPaths& paths);

// Marks the complete, checked copy as the one to install (holding its
// replication index, for the log). Synced before it returns.
absl::Status MarkSnapshotReady(const SnapshotPaths& paths, uint64_t index);

// Returns true when a copy was installed. Errors: UNAVAILABLE naming the
// path that could not be moved or removed.
absl::StatusOr<bool> FinishSnapshotInstall(const SnapshotPaths& paths);

// fsync of a file or directory. Errors: UNAVAILABLE naming it.
absl::Status SyncPath(const std::string& path);

}  // namespace gantry::replication
