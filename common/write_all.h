// Writing a whole buffer to a file descriptor (a pipe, a socket, a
// terminal) across short writes and EINTR. Thread-safe.
#pragma once

#include <cstddef>

namespace gantry {

// False, with errno set, when a write fails.
bool WriteAll(int fd, const char* data, std::size_t size);

}  // namespace gantry
