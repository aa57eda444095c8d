#include "agent/preflight/preflight_wire.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace gantry::agent {
namespace {

// Milliseconds left until `deadline` (0 when past it), for poll.
int MillisecondsLeft(PreflightDeadline deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<int64_t>(left.count(), 0, 1 << 30));
}

// Waits until `fd` is ready for `events`; false with errno ETIMEDOUT past
// the deadline.
bool WaitReady(int fd, short events, PreflightDeadline deadline) {
  for (;;) {
    pollfd entry{.fd = fd, .events = events, .revents = 0};
    const int ready = poll(&entry, 1, MillisecondsLeft(deadline));
    if (ready > 0) return true;
    if (ready == 0) {
      errno = ETIMEDOUT;
      return false;
    }
    if (errno != EINTR) return false;
  }
}

class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

absl::Status Failed(const std::string& what) {
  const int error = errno;
  const std::string text = absl::StrCat(what, ": ", std::strerror(error));
  if (error == ETIMEDOUT) return absl::DeadlineExceededError(text);
  return absl::UnavailableError(text);
}

}  // namespace

absl::StatusOr<int> ConnectBy(const std::string& host, uint32_t port,
                              PreflightDeadline deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string service = absl::StrCat(port);
  if (int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
      rc != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot resolve ", host, ": ", gai_strerror(rc)));
  }
  int fd =
      socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    freeaddrinfo(found);
    return Failed("socket");
  }
  const int rc = connect(fd, found->ai_addr, found->ai_addrlen);
  freeaddrinfo(found);
  int error = rc == 0 ? 0 : errno;
  if (error == EINPROGRESS) {
    if (!WaitReady(fd, POLLOUT, deadline)) {
      error = errno;
    } else {
      socklen_t length = sizeof(error);
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
    }
  }
  if (error != 0) {
    close(fd);
    errno = error;
    return Failed(absl::StrCat("connect to ", host, ":", port));
  }
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

std::string FormatPreflightHeader(const PreflightHeader& header) {
  return absl::StrCat("GPF1 ", header.token, " ", header.bytes, "\n");
}

absl::StatusOr<PreflightHeader> ParsePreflightHeader(const std::string& line) {
  std::vector<std::string> parts = absl::StrSplit(line, ' ');
  PreflightHeader header;
  if (parts.size() != 3 || parts[0] != "GPF1" || parts[1].empty() ||
      parts[1].size() > kPreflightMaxTokenLength ||
      !std::all_of(parts[1].begin(), parts[1].end(),
                   [](char c) { return absl::ascii_isxdigit(c); }) ||
      !absl::SimpleAtoi(parts[2], &header.bytes) ||
      header.bytes > kPreflightMaxBytes) {
    return absl::InvalidArgumentError("not a pre-flight header");
  }
  header.token = parts[1];
  return header;
}

bool SendAllBy(int fd, const char* data, size_t size,
               PreflightDeadline deadline) {
  while (size > 0) {
    const ssize_t sent = send(fd, data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent > 0) {
      data += sent;
      size -= static_cast<size_t>(sent);
      continue;
    }
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!WaitReady(fd, POLLOUT, deadline)) return false;
      continue;
    }
    return false;
  }
  return true;
}

bool ReceiveAllBy(int fd, char* data, size_t size, PreflightDeadline deadline) {
  while (size > 0) {
    const ssize_t got = recv(fd, data, size, MSG_DONTWAIT);
    if (got > 0) {
      data += got;
      size -= static_cast<size_t>(got);
      continue;
    }
    if (got == 0) {
      errno = ECONNRESET;
      return false;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!WaitReady(fd, POLLIN, deadline)) return false;
      continue;
    }
    return false;
  }
  return true;
}

bool ReceiveLineBy(int fd, std::string& line, size_t limit,
                   PreflightDeadline deadline) {
  line.clear();
  char c = 0;
  while (line.size() <= limit) {
    if (!ReceiveAllBy(fd, &c, 1, deadline)) return false;
    if (c == '\n') return true;
    line.push_back(c);
  }
  errno = EMSGSIZE;
  return false;
}

namespace {

// Where a try of the sender's side failed.
enum class SendStage {
  kConnect,    // no connection
  kHandshake,  // connected, the receiver not yet answering the pings
  kTransfer,   // the receiver took it (answered a ping)
};

// One try of the sender's side; `stage` says how far it got.
absl::StatusOr<PreflightSendFigures> SendOnce(const std::string& host,
                                              uint32_t port,
                                              const PreflightHeader& header,
                                              PreflightDeadline deadline,
                                              SendStage& stage) {
  stage = SendStage::kConnect;
  absl::StatusOr<int> connected = ConnectBy(host, port, deadline);
  if (!connected.ok()) return connected.status();
  Socket socket(*connected);
  stage = SendStage::kHandshake;
  const std::string line = FormatPreflightHeader(header);
  if (!SendAllBy(socket.fd(), line.data(), line.size(), deadline)) {
    return Failed("send the header");
  }
  using Clock = std::chrono::steady_clock;
  std::vector<double> round_trips;
  for (int i = 0; i < kPreflightPings; ++i) {
    char ping = static_cast<char>('a' + i % 26);
    const Clock::time_point sent = Clock::now();
    if (!SendAllBy(socket.fd(), &ping, 1, deadline) ||
        !ReceiveAllBy(socket.fd(), &ping, 1, deadline)) {
      return Failed("ping");
    }
    stage = SendStage::kTransfer;
    round_trips.push_back(
        std::chrono::duration<double, std::micro>(Clock::now() - sent).count());
  }
  std::sort(round_trips.begin(), round_trips.end());
  std::vector<char> chunk(kPreflightChunkBytes, 'g');
  const Clock::time_point began = Clock::now();
  for (uint64_t left = header.bytes; left > 0;) {
    const size_t size =
        static_cast<size_t>(std::min<uint64_t>(left, kPreflightChunkBytes));
    if (!SendAllBy(socket.fd(), chunk.data(), size, deadline)) {
      return Failed(absl::StrCat("send ", header.bytes, " bytes"));
    }
    left -= size;
  }
  std::string answer;
  if (!ReceiveLineBy(socket.fd(), answer, 8, deadline) || answer != "OK") {
    return Failed("wait for the receiver's OK");
  }
  const double seconds =
      std::chrono::duration<double>(Clock::now() - began).count();
  PreflightSendFigures figures;
  figures.round_trip_us = round_trips[round_trips.size() / 2];
  figures.mbps =
      static_cast<double>(header.bytes) / 1e6 / std::max(seconds, 1e-9);
  return figures;
}

}  // namespace

absl::StatusOr<PreflightSendFigures> SendPreflight(
    const std::string& host, uint32_t port, const PreflightHeader& header,
    PreflightDeadline deadline) {
  for (int tries = 1;; ++tries) {
    SendStage stage = SendStage::kConnect;
    absl::StatusOr<PreflightSendFigures> sent =
        SendOnce(host, port, header, deadline, stage);
    // Closed before the first answer: the listener did not take it (this
    // node's check has not reached it yet, or it is busy). Anything else,
    // a timeout included, is the link's or the receiver's answer.
    const bool not_taken = !sent.ok() && stage == SendStage::kHandshake &&
                           absl::IsUnavailable(sent.status());
    if (!not_taken) return sent;
    if (std::chrono::steady_clock::now() + kPreflightRetryPause >= deadline) {
      return absl::AbortedError(
          absl::StrCat("the pre-flight listener at ", host, ":", port,
                       " did not take the transfer (closed before answering, ",
                       tries, tries == 1 ? " try" : " tries",
                       "; last: ", sent.status().message(), ")"));
    }
    std::this_thread::sleep_for(kPreflightRetryPause);
  }
}

}  // namespace gantry::agent
