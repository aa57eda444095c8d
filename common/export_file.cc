#include "common/export_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "common/text.h"

namespace gantry {
namespace {

bool IsVariableName(std::string_view name) {
  if (name.empty() || absl::ascii_isdigit(static_cast<unsigned char>(name[0])))
    return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_')
      return false;
  }
  return true;
}

// Reads all of `fd` (at most one byte past the limit, to tell "too large").
absl::StatusOr<std::string> ReadAll(int fd, const std::string& what) {
  std::string content;
  char buffer[65536];
  while (content.size() <= kMaxExportFileBytes) {
    const ssize_t got = read(fd, buffer, sizeof(buffer));
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      return absl::InvalidArgumentError(
          Concat("cannot read ", what, ": ", std::strerror(errno)));
    }
    content.append(buffer, static_cast<std::size_t>(got));
  }
  if (content.size() > kMaxExportFileBytes) {
    return absl::InvalidArgumentError(
        Concat(what, " is larger than ", kMaxExportFileBytes, " bytes"));
  }
  return content;
}

}  // namespace

absl::StatusOr<std::map<std::string, std::string>> ParseExportFile(
    std::string_view content) {
  if (content.size() > kMaxExportFileBytes) {
    return absl::InvalidArgumentError(
        Concat("--export-file: the file is larger than ", kMaxExportFileBytes,
               " bytes"));
  }
  const char separator =
      content.find('\0') != std::string_view::npos ? '\0' : '\n';
  std::map<std::string, std::string> variables;
  std::size_t record = 0;
  while (!content.empty()) {
    ++record;
    const std::size_t end = content.find(separator);
    std::string_view entry = content.substr(0, end);
    content = end == std::string_view::npos ? std::string_view()
                                            : content.substr(end + 1);
    if (separator == '\n' && !entry.empty() && entry.back() == '\r') {
      entry.remove_suffix(1);
    }
    if (entry.empty()) continue;
    const std::size_t equals = entry.find('=');
    const std::string_view name = entry.substr(0, equals);
    if (equals == std::string_view::npos || !IsVariableName(name)) {
      return absl::InvalidArgumentError(Concat(
          "--export-file: record ", record, " (", QuoteForMessage(entry, 40),
          ") is not NAME=value with NAME a variable name"));
    }
    variables[std::string(name)] = std::string(entry.substr(equals + 1));
  }
  return variables;
}

absl::StatusOr<std::map<std::string, std::string>> ReadExportFile(
    const std::string& argument) {
  int descriptor = -1;
  if (absl::SimpleAtoi(argument, &descriptor)) {
    if (descriptor < 3) {
      return absl::InvalidArgumentError(
          Concat("--export-file=", argument,
                 ": standard input, output and error are not valid; give a "
                 "file name or a descriptor from 3 up"));
    }
    const std::string what = Concat("--export-file descriptor ", descriptor);
    absl::StatusOr<std::string> content = ReadAll(descriptor, what);
    if (!content.ok()) return content.status();
    return ParseExportFile(*content);
  }
  const int fd = open(argument.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::InvalidArgumentError(Concat("--export-file: cannot open ",
                                             QuoteForMessage(argument, 200),
                                             ": ", std::strerror(errno)));
  }
  struct stat status {};
  if (fstat(fd, &status) == 0 && S_ISDIR(status.st_mode)) {
    close(fd);
    return absl::InvalidArgumentError(Concat(
        "--export-file: ", QuoteForMessage(argument, 200), " is a directory"));
  }
  absl::StatusOr<std::string> content =
      ReadAll(fd, Concat("--export-file ", QuoteForMessage(argument, 200)));
  close(fd);
  if (!content.ok()) return content.status();
  return ParseExportFile(*content);
}

}  // namespace gantry
