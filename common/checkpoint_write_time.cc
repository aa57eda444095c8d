#include "common/checkpoint_write_time.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <limits>

namespace gantry {
namespace {

double Seconds(const statx_timestamp& time) {
  return static_cast<double>(time.tv_sec) + time.tv_nsec / 1e9;
}

struct Span {
  double first = std::numeric_limits<double>::infinity();
  double last = -std::numeric_limits<double>::infinity();
  std::size_t files = 0;
  bool births = false;  // every file had a birth time
};

void Add(const std::string& file, Span& span) {
  struct statx info {};
  if (statx(AT_FDCWD, file.c_str(), AT_SYMLINK_NOFOLLOW,
            STATX_TYPE | STATX_MTIME | STATX_BTIME, &info) != 0 ||
      !S_ISREG(info.stx_mode)) {
    return;
  }
  const double written = Seconds(info.stx_mtime);
  const bool born = (info.stx_mask & STATX_BTIME) != 0;
  span.births = (span.files == 0 || span.births) && born;
  ++span.files;
  span.first = std::min(span.first, born ? Seconds(info.stx_btime) : written);
  span.last = std::max(span.last, written);
}

}  // namespace

std::optional<double> CheckpointWriteSeconds(const std::string& path,
                                             std::size_t max_files) {
  namespace fs = std::filesystem;
  Span span;
  std::error_code error;
  if (fs::is_directory(fs::symlink_status(path, error))) {
    fs::recursive_directory_iterator it(
        path, fs::directory_options::skip_permission_denied, error);
    for (; !error && it != fs::recursive_directory_iterator() &&
           span.files < max_files;
         it.increment(error)) {
      if (it->is_regular_file(error)) Add(it->path().string(), span);
    }
  } else {
    Add(path, span);
  }
  if (span.files == 0 || (span.files == 1 && !span.births)) {
    return std::nullopt;
  }
  return std::max(0.0, span.last - span.first);
}

}  // namespace gantry
