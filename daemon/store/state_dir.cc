#include "daemon/store/state_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/log.h"

namespace gantry {
namespace {

namespace fs = std::filesystem;

constexpr mode_t kGroupOtherBits = S_IRWXG | S_IRWXO;

std::string Mode(mode_t mode) { return absl::StrFormat("%04o", mode & 07777); }

absl::Status Errno(const std::string& what, const std::string& path) {
  return absl::InternalError(
      absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

bool OwnedByUs(const struct stat& info) {
  return info.st_uid == geteuid() || info.st_uid == 0;
}

// Every existing directory from `path`'s parent up to /.
absl::Status CheckAncestors(const fs::path& path) {
  for (fs::path dir = path.parent_path(); !dir.empty();
       dir = dir.parent_path()) {
    struct stat info;
    if (stat(dir.c_str(), &info) != 0) return Errno("cannot stat", dir);
    const bool others_write = (info.st_mode & (S_IWGRP | S_IWOTH)) != 0;
    if ((others_write && (info.st_mode & S_ISVTX) == 0) || !OwnedByUs(info)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the state directory ", path.string(), " is inside ", dir.string(),
          " (mode ", Mode(info.st_mode), ", owner uid ", info.st_uid,
          "), which users other than root and gantryd's can write to: "
          "they could replace the state; choose a state directory whose "
          "parents only root can write (e.g. /var/lib/gantry)"));
    }
    if (dir == dir.root_path()) break;
  }
  return absl::OkStatus();
}

// Removes group/other bits from `path` and, for a directory, everything
// under it; returns how many entries it changed.
absl::StatusOr<int> TightenTree(const fs::path& root) {
  int changed = 0;
  auto tighten = [&](const fs::path& path) -> absl::Status {
    struct stat info;
    if (lstat(path.c_str(), &info) != 0) return Errno("cannot stat", path);
    if (S_ISLNK(info.st_mode) || (info.st_mode & kGroupOtherBits) == 0) {
      return absl::OkStatus();
    }
    if (chmod(path.c_str(), info.st_mode & 07700 & ~S_ISVTX) != 0) {
      return Errno("cannot chmod", path);
    }
    ++changed;
    return absl::OkStatus();
  };
  if (absl::Status s = tighten(root); !s.ok()) return s;
  std::error_code error;
  for (fs::recursive_directory_iterator it(root, error), end;
       !error && it != end; it.increment(error)) {
    if (absl::Status s = tighten(it->path()); !s.ok()) return s;
  }
  if (error) {
    return absl::InternalError(
        absl::StrCat("cannot list ", root.string(), ": ", error.message()));
  }
  return changed;
}

}  // namespace

void RestrictFileCreationMask() { umask(S_IRWXG | S_IRWXO); }

absl::Status PrepareStateDirectory(const std::string& given) {
  std::error_code error;
  const fs::path path = fs::absolute(given, error).lexically_normal();
  if (error) {
    return absl::InternalError(
        absl::StrCat("cannot resolve ", given, ": ", error.message()));
  }
  struct stat info;
  if (stat(path.c_str(), &info) != 0) {
    if (errno != ENOENT) return Errno("cannot stat state directory", path);
    // Missing parents are made under the caller's umask (no group/other
    // bits once RestrictFileCreationMask ran); the directory itself 0700.
    fs::create_directories(path.parent_path(), error);
    if (error) {
      return absl::InternalError(absl::StrCat("cannot create ",
                                              path.parent_path().string(), ": ",
                                              error.message()));
    }
    if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
      return Errno("cannot create state directory", path);
    }
    if (stat(path.c_str(), &info) != 0) {
      return Errno("cannot stat state directory", path);
    }
  }
  if (!S_ISDIR(info.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("the state directory ", path.string(),
                     " exists and is not a directory"));
  }
  if (info.st_uid != geteuid()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the state directory ", path.string(), " belongs to uid ", info.st_uid,
        ", not to gantryd's uid ", geteuid(),
        ": run gantryd as its owner, or chown it after checking its content"));
  }
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the state directory ", path.string(), " has mode ", Mode(info.st_mode),
        ": users other than its owner can write to it, so its content "
        "cannot be trusted; check it, then chmod 0700 ",
        path.string()));
  }
  if (absl::Status ancestors = CheckAncestors(path); !ancestors.ok()) {
    return ancestors;
  }
  absl::StatusOr<int> tightened = TightenTree(path);
  if (!tightened.ok()) return tightened.status();
  if (*tightened > 0) {
    log::Warn(
        "state directory was readable by other users; removed their "
        "access",
        {{"path", path.string()},
         {"was", Mode(info.st_mode)},
         {"entries", absl::StrCat(*tightened)}});
  }
  return absl::OkStatus();
}

absl::Status CreateSharedDirectory(const std::string& given) {
  const fs::path path(given);
  if (path.empty() || fs::exists(path)) return absl::OkStatus();
  if (absl::Status parent = CreateSharedDirectory(path.parent_path().string());
      !parent.ok()) {
    return parent;
  }
  if (mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    return Errno("cannot create", path);
  }
  // mkdir's mode is masked by the umask.
  if (chmod(path.c_str(), 0755) != 0) return Errno("cannot chmod", path);
  return absl::OkStatus();
}

}  // namespace gantry
