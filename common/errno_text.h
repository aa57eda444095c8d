// What an errno value means, for error messages.
#pragma once

#include <string>
#include <string_view>

namespace gantry {

// The message for `err` (std::strerror may share one buffer between
// threads; this does not).
std::string ErrnoText(int err);

// "WHAT PATH: MESSAGE" for the current errno (read first, before anything
// here could change it).
std::string ErrnoText(std::string_view what, std::string_view path);

}  // namespace gantry
