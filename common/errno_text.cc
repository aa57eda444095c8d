#include "common/errno_text.h"

#include <cerrno>
#include <system_error>

namespace gantry {

std::string ErrnoText(int err) {
  return std::error_code(err, std::generic_category()).message();
}

std::string ErrnoText(std::string_view what, std::string_view path) {
  const int err = errno;
  std::string text(what);
  text.append(" ").append(path).append(": ").append(ErrnoText(err));
  return text;
}

}  // namespace gantry
