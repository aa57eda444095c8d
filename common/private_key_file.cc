#include "common/private_key_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gantry {

absl::StatusOr<std::string> ReadPrivateKeyFile(const std::string& path,
                                               std::string_view what) {
  const auto failure = [&](std::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot read ", std::string(what), " ", path, ": ", std::string(why)));
  };
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
    return absl::NotFoundError(absl::StrCat("cannot read ", std::string(what),
                                            " ", path, ": no such file"));
  }
  if (fd < 0) return failure(std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  // The mode of the file opened, not of a path looked at before: nothing
  // can swap the file between the check and the read.
  struct stat info {};
  if (fstat(fd, &info) != 0) return failure(std::strerror(errno));
  if (!S_ISREG(info.st_mode)) return failure("not a regular file");
  if ((info.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s %s is accessible by %s (mode %04o): anyone who can read it can "
        "pass for this host; refusing it, as ssh does. Make it private: "
        "chmod 600 %s",
        std::string(what), path,
        (info.st_mode & S_IRWXO) != 0 ? "others" : "its group",
        info.st_mode & 07777, path));
  }
  std::string contents;
  char buffer[8192];
  while (true) {
    const ssize_t got = read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return failure(std::strerror(errno));
    if (got == 0) break;
    contents.append(buffer, static_cast<size_t>(got));
  }
  return contents;
}

}  // namespace gantry
