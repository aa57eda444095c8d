#include "common/tls_probe.h"

#include <netdb.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <memory>
#include <string_view>

#include "common/tls_credentials.h"

namespace gantry {
namespace {

struct HostPort {
  std::string host;
  std::string port;
};

// HOST and PORT of a gRPC TCP target; empty host when it has none.
HostPort SplitTarget(std::string_view target) {
  for (std::string_view scheme : {"dns:///", "dns:", "ipv4:", "ipv6:"}) {
    if (target.substr(0, scheme.size()) == scheme) {
      target.remove_prefix(scheme.size());
      break;
    }
  }
  const size_t colon = target.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return {};
  std::string_view host = target.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return {std::string(host), std::string(target.substr(colon + 1))};
}

// A TCP connection to `where` with send and receive timeouts (on Linux the
// send timeout also bounds connect); -1 when none could be made.
int Connect(const HostPort& where, std::chrono::milliseconds timeout) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(where.host.c_str(), where.port.c_str(), &hints, &found) !=
      0) {
    return -1;
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> addresses(found,
                                                               freeaddrinfo);
  timeval limit{};
  limit.tv_sec = timeout.count() / 1000;
  limit.tv_usec = (timeout.count() % 1000) * 1000;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd =
        socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) return fd;
    close(fd);
  }
  return -1;
}

}  // namespace

std::optional<bool> SpeaksTls(const std::string& target,
                              std::chrono::milliseconds timeout) {
  if (IsUnixTarget(target)) return std::nullopt;
  const HostPort where = SplitTarget(target);
  if (where.host.empty()) return std::nullopt;
  const int fd = Connect(where, timeout);
  if (fd < 0) return std::nullopt;
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> context(
      SSL_CTX_new(TLS_client_method()), SSL_CTX_free);
  if (!context) return false;
  // Only whether it speaks TLS: its certificate is the real client's
  // business, with the CA it will be given.
  SSL_CTX_set_verify(context.get(), SSL_VERIFY_NONE, nullptr);
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(context.get()),
                                                SSL_free);
  if (!ssl) return false;
  // gRPC servers expect HTTP/2 to be offered.
  static constexpr unsigned char kAlpn[] = {2, 'h', '2'};
  SSL_set_alpn_protos(ssl.get(), kAlpn, sizeof kAlpn);
  SSL_set_fd(ssl.get(), fd);
  const bool handshaken = SSL_connect(ssl.get()) == 1;
  if (handshaken) SSL_shutdown(ssl.get());
  ERR_clear_error();
  return handshaken;
}

}  // namespace gantry
