#include "common/cluster_name.h"

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace gantry {

absl::Status CheckSlurmName(const std::string& what, const std::string& name) {
  constexpr size_t kMaxLength = 64;
  if (name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is empty"));
  }
  if (name.size() > kMaxLength) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is ", name.size(),
                                                   " characters long; at most ",
                                                   kMaxLength, " are allowed"));
  }
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' &&
        c != '-' && c != '.') {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " \"", absl::CHexEscape(name),
                       "\" may hold only letters, digits, '_', '-' and '.'"));
    }
  }
  return absl::OkStatus();
}

}  // namespace gantry
