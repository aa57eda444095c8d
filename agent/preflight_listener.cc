#include "agent/preflight_listener.h"

#include <arpa/inet.h>
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

#include "absl/strings/str_cat.h"
#include "agent/preflight_wire.h"
#include "common/log.h"

namespace gantry::agent {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kHeaderWait = std::chrono::seconds(1);
// However slow the link, a transfer ends by then.
constexpr auto kTransferWait = std::chrono::seconds(120);
constexpr size_t kChunkBytes = 256 * 1024;
constexpr uint64_t kSegmentBytes = 1 << 20;

}  // namespace

absl::StatusOr<std::unique_ptr<PreflightListener>> PreflightListener::Start(
    const std::string& address, uint32_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string service = absl::StrCat(port);
  if (int rc = getaddrinfo(address.empty() ? nullptr : address.c_str(),
                           service.c_str(), &hints, &found);
      rc != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("pre-flight listener: cannot resolve ", address, ": ",
                     gai_strerror(rc)));
  }
  const int fd = socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  if (fd >= 0) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  const bool bound = fd >= 0 &&
                     bind(fd, found->ai_addr, found->ai_addrlen) == 0 &&
                     listen(fd, 64) == 0;
  freeaddrinfo(found);
  if (!bound) {
    const int error = errno;
    if (fd >= 0) close(fd);
    return absl::UnavailableError(absl::StrCat("pre-flight listener on ",
                                               address, ":", port, ": ",
                                               std::strerror(error)));
  }
  sockaddr_storage local{};
  socklen_t length = sizeof(local);
  getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length);
  const uint32_t chosen =
      local.ss_family == AF_INET6
          ? ntohs(reinterpret_cast<sockaddr_in6*>(&local)->sin6_port)
          : ntohs(reinterpret_cast<sockaddr_in*>(&local)->sin_port);
  return std::unique_ptr<PreflightListener>(new PreflightListener(fd, chosen));
}

PreflightListener::PreflightListener(int fd, uint32_t port)
    : listen_fd_(fd), port_(port) {
  if (pipe2(wake_, O_CLOEXEC) != 0) {
    wake_[0] = wake_[1] = -1;
  }
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

PreflightListener::~PreflightListener() {
  std::map<int, std::thread> threads;
  std::vector<std::thread> finished;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    // Ends every blocked transfer at once.
    for (int fd : serving_) shutdown(fd, SHUT_RDWR);
  }
  if (wake_[1] >= 0) {
    const char byte = 0;
    (void)!write(wake_[1], &byte, 1);
  }
  shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  {
    std::lock_guard lock(mutex_);
    threads.swap(threads_);
    finished.swap(finished_);
  }
  for (auto& [fd, thread] : threads) thread.join();
  for (std::thread& thread : finished) thread.join();
  close(listen_fd_);
  if (wake_[0] >= 0) close(wake_[0]);
  if (wake_[1] >= 0) close(wake_[1]);
}

void PreflightListener::AcceptLoop() {
  for (;;) {
    pollfd entries[2] = {{.fd = listen_fd_, .events = POLLIN, .revents = 0},
                         {.fd = wake_[0], .events = POLLIN, .revents = 0}};
    const int ready = poll(entries, wake_[0] >= 0 ? 2 : 1, 1000);
    std::vector<std::thread> done;
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      done.swap(finished_);
    }
    for (std::thread& thread : done) thread.join();
    if (ready <= 0 || (entries[0].revents & POLLIN) == 0) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    std::lock_guard lock(mutex_);
    if (stopping_ || serving_.size() >= kMaxConnections) {
      close(fd);
      continue;
    }
    serving_.insert(fd);
    threads_.emplace(fd, std::thread([this, fd] { Serve(fd); }));
  }
}

void PreflightListener::Serve(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  std::string line;
  absl::StatusOr<PreflightHeader> header =
      ReceiveLineBy(fd, line, 128, Clock::now() + kHeaderWait)
          ? ParsePreflightHeader(line)
          : absl::InvalidArgumentError("no header");
  if (header.ok()) {
    const Clock::time_point deadline = Clock::now() + kTransferWait;
    Received received;
    bool ok = true;
    for (int i = 0; ok && i < kPreflightPings; ++i) {
      char ping = 0;
      ok = ReceiveAllBy(fd, &ping, 1, deadline) &&
           SendAllBy(fd, &ping, 1, deadline);
    }
    std::vector<char> chunk(kChunkBytes);
    // The rate of the best 1 MiB segment: a truly slow link is slow in
    // every one, while a busy host's scheduler stalls only some.
    Clock::time_point mark{};
    uint64_t in_segment = 0;
    double best_mbps = 0;
    for (uint64_t left = header->bytes; ok && left > 0;) {
      // The clock starts at the first byte, as the sender's at its first
      // write: neither counts the pings.
      if (mark == Clock::time_point{}) {
        ok = ReceiveAllBy(fd, chunk.data(), 1, deadline);
        mark = Clock::now();
        left -= 1;
        continue;
      }
      const size_t size =
          static_cast<size_t>(std::min<uint64_t>(left, kChunkBytes));
      ok = ReceiveAllBy(fd, chunk.data(), size, deadline);
      left -= size;
      in_segment += size;
      const bool last = left == 0;
      if (ok &&
          (in_segment >= kSegmentBytes ||
           (last && (best_mbps == 0 || in_segment >= kSegmentBytes / 2)))) {
        const Clock::time_point now = Clock::now();
        const double seconds =
            std::max(std::chrono::duration<double>(now - mark).count(), 1e-9);
        best_mbps = std::max(best_mbps,
                             static_cast<double>(in_segment) / 1e6 / seconds);
        mark = now;
        in_segment = 0;
      }
    }
    if (ok) {
      received.mbps = best_mbps;
      ok = SendAllBy(fd, "OK\n", 3, deadline);
    }
    if (!ok) {
      received.problem =
          absl::StrCat("receive broke off: ", std::strerror(errno));
    }
    Record(header->token, std::move(received));
  }
  // Closed under the lock: the acceptor may be handed the same number
  // next, and must find this entry gone.
  std::lock_guard lock(mutex_);
  close(fd);
  serving_.erase(fd);
  auto self = threads_.find(fd);
  if (self != threads_.end()) {
    finished_.push_back(std::move(self->second));
    threads_.erase(self);
  }
}

void PreflightListener::Record(const std::string& token, Received received) {
  {
    std::lock_guard lock(mutex_);
    if (results_.emplace(token, std::move(received)).second) {
      result_order_.push_back(token);
    }
    while (result_order_.size() > kResultsKept) {
      results_.erase(result_order_.front());
      result_order_.pop_front();
    }
  }
  arrived_.notify_all();
}

std::optional<PreflightListener::Received> PreflightListener::WaitFor(
    const std::string& token, Clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  arrived_.wait_until(lock, deadline,
                      [&] { return stopping_ || results_.contains(token); });
  auto it = results_.find(token);
  if (it == results_.end()) return std::nullopt;
  return it->second;
}

}  // namespace gantry::agent
