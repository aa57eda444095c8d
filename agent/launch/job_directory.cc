#include "agent/launch/job_directory.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "agent/launch/user_file_access.h"
#include "agent/system/scoped_fd.h"
#include "common/errno_text.h"
#include "common/log.h"
#include "common/write_all.h"

namespace gantry::agent {
namespace {

// Emptying a job directory on the agent's own disk is quick; the bound is
// for a user who mounted something slow inside it.
constexpr std::chrono::seconds kRemoveTimeout{5};

}  // namespace

absl::Status WriteJobFile(const std::string& job_dir, const std::string& name,
                          const std::string& content,
                          const RankIdentity& user) {
  if (name.empty() || name.find('/') != std::string::npos || name == "." ||
      name == "..") {
    return absl::InvalidArgumentError(
        absl::StrCat("bad job file name '", name, "'"));
  }
  if (::mkdir(job_dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::UnavailableError(ErrnoText("cannot create", job_dir));
  }
  ScopedFd dir(
      ::open(job_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (dir.get() < 0) {
    if (errno == ELOOP || errno == ENOTDIR) {
      return absl::FailedPreconditionError(absl::StrCat(
          "job directory ", job_dir, " is not a directory of the agent's"));
    }
    return absl::UnavailableError(ErrnoText("cannot open", job_dir));
  }
  struct stat info {};
  if (::fstat(dir.get(), &info) != 0) {
    return absl::UnavailableError(ErrnoText("cannot stat", job_dir));
  }
  if (info.st_uid != ::geteuid() &&
      !(user.switch_user && info.st_uid == user.uid)) {
    return absl::FailedPreconditionError(
        absl::StrCat("job directory ", job_dir, " belongs to uid ", info.st_uid,
                     ", neither the agent nor the job's user"));
  }
  const std::string path = absl::StrCat(job_dir, "/", name);
  // Whatever the user left under this name goes (unlinking a link leaves
  // its target alone); O_EXCL then refuses one planted in between.
  if (::unlinkat(dir.get(), name.c_str(), 0) != 0 && errno != ENOENT) {
    return absl::UnavailableError(ErrnoText("cannot replace", path));
  }
  ScopedFd file(::openat(dir.get(), name.c_str(),
                         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                         0700));
  if (file.get() < 0) {
    return absl::UnavailableError(ErrnoText("cannot create", path));
  }
  if (!WriteAll(file.get(), content.data(), content.size())) {
    return absl::UnavailableError(ErrnoText("cannot write", path));
  }
  if (!user.switch_user) {
    if (::fchmod(file.get(), 0755) != 0) {
      return absl::UnavailableError(ErrnoText("cannot chmod", path));
    }
    return absl::OkStatus();
  }
  // The job's user runs it, and no other user may read it.
  if (::fchown(file.get(), user.uid, user.gid) != 0 ||
      ::fchmod(file.get(), 0700) != 0 ||
      ::fchown(dir.get(), user.uid, user.gid) != 0 ||
      ::fchmod(dir.get(), 0700) != 0) {
    return absl::UnavailableError(
        ErrnoText("cannot hand the script to its user:", job_dir));
  }
  return absl::OkStatus();
}

void RemoveJobDirectory(const std::string& job_dir) {
  struct stat info {};
  if (::lstat(job_dir.c_str(), &info) != 0) return;
  if (!S_ISDIR(info.st_mode)) {
    // Not ours to descend into; the name itself is in the agent's parent.
    ::unlink(job_dir.c_str());
    return;
  }
  RankIdentity owner;
  owner.switch_user = ::geteuid() == 0 && info.st_uid != 0;
  owner.uid = info.st_uid;
  owner.gid = info.st_gid;
  owner.groups = {info.st_gid};
  absl::Status emptied =
      RemoveDirectoryContentsAsUser(owner, job_dir, kRemoveTimeout);
  if (!emptied.ok()) {
    log::Warn("cannot empty a job directory (the next agent start tries again)",
              {{"error", emptied.ToString()}});
    return;
  }
  if (::rmdir(job_dir.c_str()) != 0 && errno != ENOENT) {
    log::Warn(
        "cannot remove a job directory (the next agent start tries "
        "again)",
        {{"error", ErrnoText("rmdir", job_dir)}});
  }
}

}  // namespace gantry::agent
