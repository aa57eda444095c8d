#include "agent/checkpoint/memory_checkpoint_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/system/scoped_fd.h"
#include "common/errno_text.h"

namespace gantry::agent {
namespace {

absl::Status Unavailable(absl::string_view what, absl::string_view path) {
  return absl::UnavailableError(
      ErrnoText(std::string_view(what.data(), what.size()),
                std::string_view(path.data(), path.size())));
}

// The names of the entries of `dir_fd`, "." and ".." left out.
absl::StatusOr<std::vector<std::string>> EntriesOf(int dir_fd,
                                                   absl::string_view where) {
  const int copy = ::dup(dir_fd);
  if (copy < 0) return Unavailable("dup", where);
  DIR* dir = ::fdopendir(copy);
  if (dir == nullptr) {
    ::close(copy);
    return Unavailable("fdopendir", where);
  }
  ::rewinddir(dir);
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(dir)) {
    const absl::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    names.emplace_back(name);
  }
  ::closedir(dir);
  return names;
}

absl::Status ListInto(int dir_fd, const std::string& prefix, size_t depth,
                      uid_t owner, SnapshotListing& listing) {
  if (depth > kMaxSnapshotDepth) {
    return absl::FailedPreconditionError(absl::StrCat(
        "directories nested deeper than ", kMaxSnapshotDepth, " at ", prefix));
  }
  absl::StatusOr<std::vector<std::string>> names = EntriesOf(dir_fd, prefix);
  if (!names.ok()) return names.status();
  for (const std::string& name : *names) {
    const std::string path = prefix.empty() ? name : prefix + "/" + name;
    if (absl::Status valid = CheckSnapshotPath(path); !valid.ok()) {
      return absl::FailedPreconditionError(valid.message());
    }
    struct stat info {};
    if (::fstatat(dir_fd, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) {
      return Unavailable("stat", path);
    }
    if (info.st_uid != owner) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, " belongs to uid ", info.st_uid, ", not ", owner));
    }
    if (S_ISDIR(info.st_mode)) {
      ScopedFd child(::openat(dir_fd, name.c_str(), kSnapshotDirectoryFlags));
      if (child.get() < 0) return Unavailable("open", path);
      if (absl::Status listed =
              ListInto(child.get(), path, depth + 1, owner, listing);
          !listed.ok()) {
        return listed;
      }
      continue;
    }
    if (!S_ISREG(info.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, " is not a regular file or a directory"));
    }
    if (info.st_nlink != 1) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, " has ", info.st_nlink, " hard links"));
    }
    if (listing.files.size() >= kMaxSnapshotFiles) {
      return absl::ResourceExhaustedError(
          absl::StrCat("more than ", kMaxSnapshotFiles, " files"));
    }
    listing.files.push_back(
        {.path = path, .bytes = static_cast<uint64_t>(info.st_size)});
    listing.bytes += static_cast<uint64_t>(info.st_size);
  }
  return absl::OkStatus();
}

// Walks `path`'s directories below `dir_fd` by descriptor; `create` makes
// the missing ones. Returns the descriptor of the last directory and the
// file name left.
absl::StatusOr<std::pair<ScopedFd, std::string>> WalkToParent(
    int dir_fd, const std::string& path, bool create) {
  std::vector<std::string> parts = absl::StrSplit(path, '/');
  ScopedFd current(::dup(dir_fd));
  if (current.get() < 0) return Unavailable("dup", path);
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    const char* name = parts[i].c_str();
    if (create && ::mkdirat(current.get(), name, 0700) != 0 &&
        errno != EEXIST) {
      return Unavailable("mkdir", path);
    }
    ScopedFd next(::openat(current.get(), name, kSnapshotDirectoryFlags));
    if (next.get() < 0) return Unavailable("open", path);
    current = std::move(next);
  }
  return std::make_pair(std::move(current), parts.back());
}

}  // namespace

absl::Status CheckSnapshotPath(absl::string_view path) {
  if (path.empty() || path.size() > kMaxSnapshotPathLength) {
    return absl::InvalidArgumentError(absl::StrCat(
        "snapshot file path empty or longer than ", kMaxSnapshotPathLength));
  }
  size_t depth = 0;
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    ++depth;
    if (part.empty() || part == "." || part == "..") {
      return absl::InvalidArgumentError(
          absl::StrCat("snapshot file path \"", path,
                       "\" has an empty, \".\" or \"..\" component"));
    }
    for (char c : part) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
        return absl::InvalidArgumentError(
            "snapshot file path has a control character");
      }
    }
  }
  if (depth > kMaxSnapshotDepth + 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("snapshot file path \"", path, "\" is nested deeper than ",
                     kMaxSnapshotDepth));
  }
  return absl::OkStatus();
}

absl::StatusOr<SnapshotListing> ListSnapshot(int step_fd, uid_t owner) {
  SnapshotListing listing;
  if (absl::Status listed = ListInto(step_fd, "", 0, owner, listing);
      !listed.ok()) {
    return listed;
  }
  return listing;
}

absl::StatusOr<int> OpenSnapshotFile(int step_fd, const SnapshotFile& file,
                                     uid_t owner) {
  absl::StatusOr<std::pair<ScopedFd, std::string>> parent =
      WalkToParent(step_fd, file.path, /*create=*/false);
  if (!parent.ok()) return parent.status();
  const int fd =
      ::openat(parent->first.get(), parent->second.c_str(),
               O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return Unavailable("open", file.path);
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) ||
      info.st_uid != owner || info.st_nlink != 1 ||
      static_cast<uint64_t>(info.st_size) != file.bytes) {
    ::close(fd);
    return absl::FailedPreconditionError(
        absl::StrCat(file.path, " changed while the snapshot was copied"));
  }
  return fd;
}

absl::StatusOr<int> CreateSnapshotFile(int dir_fd, const std::string& path) {
  if (absl::Status valid = CheckSnapshotPath(path); !valid.ok()) return valid;
  absl::StatusOr<std::pair<ScopedFd, std::string>> parent =
      WalkToParent(dir_fd, path, /*create=*/true);
  if (!parent.ok()) return parent.status();
  const int fd =
      ::openat(parent->first.get(), parent->second.c_str(),
               O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Unavailable("create", path);
  return fd;
}

absl::Status ChownSnapshotTree(int dir_fd, uid_t uid, gid_t gid) {
  if (::fchown(dir_fd, uid, gid) != 0) return Unavailable("chown", "snapshot");
  absl::StatusOr<std::vector<std::string>> names = EntriesOf(dir_fd, "");
  if (!names.ok()) return names.status();
  for (const std::string& name : *names) {
    struct stat info {};
    if (::fstatat(dir_fd, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) {
      return Unavailable("stat", name);
    }
    if (S_ISDIR(info.st_mode)) {
      ScopedFd child(::openat(dir_fd, name.c_str(), kSnapshotDirectoryFlags));
      if (child.get() < 0) return Unavailable("open", name);
      if (absl::Status done = ChownSnapshotTree(child.get(), uid, gid);
          !done.ok()) {
        return done;
      }
    } else if (::fchownat(dir_fd, name.c_str(), uid, gid,
                          AT_SYMLINK_NOFOLLOW) != 0) {
      return Unavailable("chown", name);
    }
  }
  return absl::OkStatus();
}

absl::Status RemoveSnapshotTree(int parent_fd, const std::string& name) {
  struct stat info {};
  if (::fstatat(parent_fd, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) {
    return errno == ENOENT ? absl::OkStatus() : Unavailable("stat", name);
  }
  if (S_ISDIR(info.st_mode)) {
    ScopedFd dir(::openat(parent_fd, name.c_str(), kSnapshotDirectoryFlags));
    if (dir.get() < 0) return Unavailable("open", name);
    absl::StatusOr<std::vector<std::string>> names = EntriesOf(dir.get(), name);
    if (!names.ok()) return names.status();
    for (const std::string& entry : *names) {
      if (absl::Status removed = RemoveSnapshotTree(dir.get(), entry);
          !removed.ok()) {
        return removed;
      }
    }
  }
  if (::unlinkat(parent_fd, name.c_str(),
                 S_ISDIR(info.st_mode) ? AT_REMOVEDIR : 0) != 0 &&
      errno != ENOENT) {
    return Unavailable("remove", name);
  }
  return absl::OkStatus();
}

}  // namespace gantry::agent
