#include "common/text_file.h"

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace gantry {

absl::Status CheckNotDirectory(const std::string& path,
                               const std::string& file_noun,
                               const std::string& content_noun) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (st.type() == std::filesystem::file_type::not_found) {
    return absl::NotFoundError(absl::StrCat(file_noun, " not found: ", path));
  }
  if (st.type() == std::filesystem::file_type::directory) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is a directory, not ", content_noun));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot read ", path, ": ",
        std::error_code(errno, std::generic_category()).message()));
  }
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

}  // namespace gantry
