#include "daemon/replication/snapshot_install.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/crash_point.h"
#include "common/log.h"

namespace gantry::replication {
namespace {

absl::Status Errno(const std::string& what, const std::string& path) {
  return absl::UnavailableError(
      absl::StrCat("cannot ", what, " ", path, ": ", std::strerror(errno)));
}

bool Exists(const std::string& path) {
  std::error_code ignored;
  return std::filesystem::exists(path, ignored);
}

absl::Status RemoveTree(const std::string& path) {
  std::error_code error;
  std::filesystem::remove_all(path, error);
  if (error) {
    return absl::UnavailableError(
        absl::StrCat("cannot remove ", path, ": ", error.message()));
  }
  return absl::OkStatus();
}

absl::Status Rename(const std::string& from, const std::string& to) {
  if (std::rename(from.c_str(), to.c_str()) != 0) {
    return Errno(absl::StrCat("move to ", to, ":"), from);
  }
  return absl::OkStatus();
}

}  // namespace

SnapshotPaths::SnapshotPaths(const std::string& state)
    : state_dir(state),
      db(state + "/db"),
      incoming(state + "/db.incoming"),
      ready(state + "/db.incoming.ready"),
      replaced(state + "/db.replaced") {}

absl::Status SyncPath(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Errno("open", path);
  const int synced = ::fsync(fd);
  ::close(fd);
  if (synced != 0) return Errno("sync", path);
  return absl::OkStatus();
}

absl::Status PrepareIncoming(const SnapshotPaths& paths) {
  if (std::remove(paths.ready.c_str()) != 0 && errno != ENOENT) {
    return Errno("remove", paths.ready);
  }
  if (absl::Status removed = RemoveTree(paths.incoming); !removed.ok()) {
    return removed;
  }
  if (::mkdir(paths.incoming.c_str(), 0700) != 0) {
    return Errno("create", paths.incoming);
  }
  return absl::OkStatus();
}

absl::Status MarkSnapshotReady(const SnapshotPaths& paths, uint64_t index) {
  if (absl::Status synced = SyncPath(paths.incoming); !synced.ok()) {
    return synced;
  }
  const int fd = ::open(paths.ready.c_str(),
                        O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Errno("create", paths.ready);
  const std::string text = absl::StrCat(index, "\n");
  const bool written = ::write(fd, text.data(), text.size()) ==
                           static_cast<ssize_t>(text.size()) &&
                       ::fsync(fd) == 0;
  ::close(fd);
  if (!written) return Errno("write", paths.ready);
  return SyncPath(paths.state_dir);
}

absl::StatusOr<bool> FinishSnapshotInstall(const SnapshotPaths& paths) {
  if (!Exists(paths.ready)) {
    // A copy that never became ready (the download was cut), or the old
    // database left from a finished installation.
    if (absl::Status removed = RemoveTree(paths.incoming); !removed.ok()) {
      return removed;
    }
    if (absl::Status removed = RemoveTree(paths.replaced); !removed.ok()) {
      return removed;
    }
    return false;
  }
  if (!Exists(paths.incoming) && !Exists(paths.db)) {
    // Neither copy is where it should be (moved by hand?): put the old
    // database back rather than start empty.
    if (Exists(paths.replaced)) {
      if (absl::Status moved = Rename(paths.replaced, paths.db); !moved.ok()) {
        return moved;
      }
    }
    if (std::remove(paths.ready.c_str()) != 0 && errno != ENOENT) {
      return Errno("remove", paths.ready);
    }
    return false;
  }
  if (Exists(paths.incoming)) {
    if (Exists(paths.db)) {
      if (absl::Status moved = Rename(paths.db, paths.replaced); !moved.ok()) {
        return moved;
      }
      if (absl::Status synced = SyncPath(paths.state_dir); !synced.ok()) {
        return synced;
      }
      CrashPoint("gantryd.snapshot.between_renames");
    }
    if (absl::Status moved = Rename(paths.incoming, paths.db); !moved.ok()) {
      return moved;
    }
    if (absl::Status synced = SyncPath(paths.state_dir); !synced.ok()) {
      return synced;
    }
  }
  // The copy is in place: the mark and the old database can go.
  if (std::remove(paths.ready.c_str()) != 0 && errno != ENOENT) {
    return Errno("remove", paths.ready);
  }
  if (absl::Status removed = RemoveTree(paths.replaced); !removed.ok()) {
    return removed;
  }
  if (absl::Status synced = SyncPath(paths.state_dir); !synced.ok()) {
    return synced;
  }
  log::Info("installed a copy of the leader's state", {{"db", paths.db}});
  return true;
}

}  // namespace gantry::replication
