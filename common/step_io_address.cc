#include "common/step_io_address.h"

#include <netdb.h>

#include <cstring>

#include "absl/strings/str_cat.h"

namespace gantry {

absl::StatusOr<socklen_t> ResolveStepIoAddress(const std::string& address,
                                               sockaddr_storage& out) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad step output address '", address, "'"));
  }
  std::string host = address.substr(0, colon);
  const std::string port = address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const int error = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found);
  if (error != 0 || found == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot resolve the step output address '", address,
                     "': ", ::gai_strerror(error)));
  }
  const socklen_t length = found->ai_addrlen;
  std::memcpy(&out, found->ai_addr, length);
  ::freeaddrinfo(found);
  return length;
}

}  // namespace gantry
