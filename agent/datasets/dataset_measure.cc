#include "agent/datasets/dataset_measure.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <time.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "agent/datasets/dataset_tree.h"
#include "agent/datasets/sha256_digest.h"
#include "agent/system/scoped_fd.h"

namespace gantry::agent {
namespace {

struct Walk {
  TreeMeasure measure;
  Sha256Digest digest;
  std::set<std::pair<dev_t, ino_t>> linked;  // inodes with several names
  size_t inodes = 0;
};

absl::Status Unreadable(const std::string& path, int error) {
  if (error == ENOENT) {
    return absl::NotFoundError(absl::StrCat(path, " does not exist"));
  }
  return absl::UnavailableError(
      absl::StrCat("cannot measure ", path, ": ", std::strerror(error)));
}

void Count(Walk& walk, const std::string& relative, const struct stat& st) {
  ++walk.inodes;
  const bool first = st.st_nlink < 2 || S_ISDIR(st.st_mode) ||
                     walk.linked.insert({st.st_dev, st.st_ino}).second;
  if (first) {
    walk.measure.allocated_bytes += static_cast<uint64_t>(st.st_blocks) * 512;
  }
  if (S_ISREG(st.st_mode)) {
    walk.measure.file_bytes += static_cast<uint64_t>(st.st_size);
    ++walk.measure.files;
  } else if (!S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode)) {
    walk.measure.plain = false;
  }
  walk.measure.newest_change_ns =
      std::max(walk.measure.newest_change_ns,
               static_cast<int64_t>(st.st_ctim.tv_sec) * 1'000'000'000 +
                   st.st_ctim.tv_nsec);
  walk.digest.Add(absl::StrCat(relative.size(), ":", relative, " ", st.st_mode,
                               " ", st.st_size, " ", st.st_uid, " ", st.st_ino,
                               " ", st.st_ctim.tv_sec, ".", st.st_ctim.tv_nsec,
                               "\n"));
}

absl::Status WalkDirectory(Walk& walk, int fd, const std::string& shown,
                           const std::string& relative, int depth) {
  if (depth > kMaxDatasetDepth) {
    walk.measure.bounded = false;
    return absl::OkStatus();
  }
  const int listing_fd = dup(fd);
  if (listing_fd < 0) return Unreadable(shown, errno);
  DIR* dir = fdopendir(listing_fd);
  if (dir == nullptr) {
    close(listing_fd);
    return Unreadable(shown, errno);
  }
  std::vector<std::string> names;
  while (struct dirent* item = readdir(dir)) {
    const std::string name = item->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(dir);
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    if (walk.inodes >= kMaxDatasetEntries) {
      walk.measure.bounded = false;
      return absl::OkStatus();
    }
    const std::string path = relative + "/" + name;
    struct stat st {};
    if (fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return Unreadable(shown + path, errno);
    }
    Count(walk, path, st);
    if (!S_ISDIR(st.st_mode)) continue;
    ScopedFd child(openat(fd, name.c_str(),
                          O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (child.get() < 0) return Unreadable(shown + path, errno);
    if (absl::Status status =
            WalkDirectory(walk, child.get(), shown, path, depth + 1);
        !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TreeMeasure> MeasureTree(int dir_fd, const std::string& name) {
  Walk walk;
  struct stat st {};
  if (fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return Unreadable(name, errno);
  }
  Count(walk, "", st);
  if (S_ISDIR(st.st_mode)) {
    ScopedFd top(openat(dir_fd, name.c_str(),
                        O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (top.get() < 0) return Unreadable(name, errno);
    struct stat opened {};
    if (fstat(top.get(), &opened) != 0 || opened.st_ino != st.st_ino) {
      return Unreadable(name, ESTALE);
    }
    if (absl::Status status = WalkDirectory(walk, top.get(), name, "", 1);
        !status.ok()) {
      return status;
    }
  }
  walk.measure.fingerprint = walk.digest.Hex();
  return std::move(walk.measure);
}

absl::StatusOr<TreeMeasure> MeasureTree(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string parent = slash == 0 ? "/" : path.substr(0, slash);
  ScopedFd dir(
      open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (dir.get() < 0) return Unreadable(parent, errno);
  return MeasureTree(dir.get(), path.substr(slash + 1));
}

absl::StatusOr<TreeMeasure> MeasureSettledTree(const std::string& path) {
  constexpr int kAttempts = 200;
  for (int attempt = 1;; ++attempt) {
    // A tick for the changes just made (the copy's last) to be in the past:
    // most often one walk then suffices.
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    // File systems stamp changes from the coarse clock.
    struct timespec now {};
    clock_gettime(CLOCK_REALTIME_COARSE, &now);
    const int64_t started =
        static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
    absl::StatusOr<TreeMeasure> measure = MeasureTree(path);
    if (!measure.ok() || measure->newest_change_ns < started ||
        attempt == kAttempts) {
      return measure;
    }
  }
}

}  // namespace gantry::agent
