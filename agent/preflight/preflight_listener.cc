#include "agent/preflight/preflight_listener.h"

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
#include "agent/preflight/preflight_wire.h"
#include "common/log.h"

namespace gantry::agent {
namespace {

using Clock = std::chrono::steady_clock;

// A ring peer sends its header as soon as it connects.
constexpr auto kHeaderWait = std::chrono::seconds(1);
// "GPF1 <token> <bytes>" and "GMC1 ..." (memory_checkpoint_wire.h): well
// within this.
constexpr size_t kMaxHeaderLine = 200;
// However slow the link, a transfer ends by then.
constexpr auto kTransferWait = std::chrono::seconds(120);
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
  // Non-blocking: the acceptor takes every waiting connection until
  // accept says there is none left.
  const int fd =
      socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  const int one = 1;
  if (fd >= 0) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  const bool bound = fd >= 0 &&
                     bind(fd, found->ai_addr, found->ai_addrlen) == 0 &&
                     listen(fd, SOMAXCONN) == 0;
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
    MutexLock lock(mutex_);
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
    MutexLock lock(mutex_);
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
  PreflightPendingSet pending(kMaxPending);
  std::vector<pollfd> entries;
  for (;;) {
    entries.clear();
    entries.push_back({.fd = listen_fd_, .events = POLLIN, .revents = 0});
    if (wake_[0] >= 0) {
      entries.push_back({.fd = wake_[0], .events = POLLIN, .revents = 0});
    }
    const size_t first_pending = entries.size();
    for (int fd : pending.Descriptors()) {
      entries.push_back({.fd = fd, .events = POLLIN, .revents = 0});
    }
    int wait_ms = 1000;
    if (std::optional<Clock::time_point> next = pending.NextDeadline()) {
      const auto left =
          std::chrono::ceil<std::chrono::milliseconds>(*next - Clock::now());
      wait_ms = static_cast<int>(std::clamp<int64_t>(left.count(), 0, wait_ms));
    }
    const int ready =
        poll(entries.data(), static_cast<nfds_t>(entries.size()), wait_ms);
    std::vector<std::thread> done;
    {
      MutexLock lock(mutex_);
      if (stopping_) {
        for (int fd : pending.Descriptors()) close(fd);
        return;
      }
      done.swap(finished_);
    }
    for (std::thread& thread : done) thread.join();
    // Headers first, then new connections: what already waits is read
    // before anything new can push it out.
    for (size_t i = first_pending; ready > 0 && i < entries.size(); ++i) {
      if (entries[i].revents != 0) ReadHeader(entries[i].fd, pending);
    }
    for (int fd : pending.TakeExpired(Clock::now())) close(fd);
    if (ready > 0 && (entries[0].revents & POLLIN) != 0) {
      AcceptWaiting(pending);
    }
  }
}

void PreflightListener::AcceptWaiting(PreflightPendingSet& pending) {
  // Half the set at most per round, so that one burst cannot push out
  // connections whose headers have not been read yet.
  for (size_t accepted = 0; accepted < kMaxPending / 2; ++accepted) {
    sockaddr_storage peer{};
    socklen_t length = sizeof(peer);
    const int fd = accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer),
                           &length, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;
    char text[INET6_ADDRSTRLEN] = {};
    const void* address =
        peer.ss_family == AF_INET6
            ? static_cast<const void*>(
                  &reinterpret_cast<sockaddr_in6*>(&peer)->sin6_addr)
            : static_cast<const void*>(
                  &reinterpret_cast<sockaddr_in*>(&peer)->sin_addr);
    inet_ntop(peer.ss_family, address, text, sizeof(text));
    if (std::optional<int> pushed_out =
            pending.Add(fd, text, Clock::now() + kHeaderWait)) {
      close(*pushed_out);
    }
  }
}

void PreflightListener::ReadHeader(int fd, PreflightPendingSet& pending) {
  PreflightPendingSet::Connection* connection = pending.Find(fd);
  if (connection == nullptr) return;
  const PendingHeader read = ReadPendingHeader(fd, *connection, kMaxHeaderLine);
  if (read == PendingHeader::kIncomplete) return;  // more to come
  const bool drop = read == PendingHeader::kDropped;
  if (!drop) {
    if (LineHandler* handler = HandlerFor(connection->received)) {
      const std::string line = connection->received;
      pending.Remove(fd);
      if (!(*handler)(fd, line)) close(fd);
      return;
    }
  }
  std::optional<PreflightHeader> header;
  if (!drop) {
    absl::StatusOr<PreflightHeader> parsed =
        ParsePreflightHeader(connection->received);
    if (parsed.ok()) header = std::move(*parsed);
  }
  pending.Remove(fd);
  if (!header || !StartTransfer(fd, *header)) close(fd);
}

void PreflightListener::AddProtocol(const std::string& magic,
                                    LineHandler handler) {
  MutexLock lock(mutex_);
  protocols_[magic + " "] = std::move(handler);
}

PreflightListener::LineHandler* PreflightListener::HandlerFor(
    const std::string& line) {
  MutexLock lock(mutex_);
  for (auto& [prefix, handler] : protocols_) {
    if (line.rfind(prefix, 0) == 0) return &handler;
  }
  return nullptr;
}

bool PreflightListener::StartTransfer(int fd, const PreflightHeader& header) {
  MutexLock lock(mutex_);
  if (stopping_) return false;
  auto expected = expected_.find(header.token);
  if (expected == expected_.end() || expected->second < Clock::now() ||
      transferring_.contains(header.token) ||
      threads_.size() >= kMaxTransfers) {
    return false;
  }
  transferring_.insert(header.token);
  serving_.insert(fd);
  threads_.emplace(fd, std::thread([this, fd, header] { Serve(fd, header); }));
  return true;
}

void PreflightListener::Expect(const std::string& token,
                               Clock::time_point until) {
  MutexLock lock(mutex_);
  const Clock::time_point now = Clock::now();
  std::erase_if(expected_,
                [&](const auto& entry) { return entry.second < now; });
  expected_[token] = until;
}

void PreflightListener::Serve(int fd, PreflightHeader header) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  const Clock::time_point deadline = Clock::now() + kTransferWait;
  Received received;
  bool ok = true;
  for (int i = 0; ok && i < kPreflightPings; ++i) {
    char ping = 0;
    ok = ReceiveAllBy(fd, &ping, 1, deadline) &&
         SendAllBy(fd, &ping, 1, deadline);
  }
  std::vector<char> chunk(kPreflightChunkBytes);
  // The rate of the best 1 MiB segment: a truly slow link is slow in
  // every one, while a busy host's scheduler stalls only some.
  Clock::time_point mark{};
  uint64_t in_segment = 0;
  double best_mbps = 0;
  for (uint64_t left = header.bytes; ok && left > 0;) {
    // The clock starts at the first byte, as the sender's at its first
    // write: neither counts the pings.
    if (mark == Clock::time_point{}) {
      ok = ReceiveAllBy(fd, chunk.data(), 1, deadline);
      mark = Clock::now();
      left -= 1;
      continue;
    }
    const size_t size =
        static_cast<size_t>(std::min<uint64_t>(left, kPreflightChunkBytes));
    ok = ReceiveAllBy(fd, chunk.data(), size, deadline);
    left -= size;
    in_segment += size;
    const bool last = left == 0;
    if (ok && (in_segment >= kSegmentBytes ||
               (last && (best_mbps == 0 || in_segment >= kSegmentBytes / 2)))) {
      const Clock::time_point now = Clock::now();
      const double seconds =
          std::max(std::chrono::duration<double>(now - mark).count(), 1e-9);
      best_mbps =
          std::max(best_mbps, static_cast<double>(in_segment) / 1e6 / seconds);
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
  Record(header.token, std::move(received));
  // Closed under the lock: the acceptor may be handed the same number
  // next, and must find this entry gone.
  MutexLock lock(mutex_);
  close(fd);
  serving_.erase(fd);
  transferring_.erase(header.token);
  auto self = threads_.find(fd);
  if (self != threads_.end()) {
    finished_.push_back(std::move(self->second));
    threads_.erase(self);
  }
}

void PreflightListener::Record(const std::string& token, Received received) {
  {
    MutexLock lock(mutex_);
    // The latest transfer with a token wins: a sender tries again after a
    // transfer that broke off before it began.
    if (results_.insert_or_assign(token, std::move(received)).second) {
      result_order_.push_back(token);
    }
    while (result_order_.size() > kResultsKept) {
      results_.erase(result_order_.front());
      result_order_.pop_front();
    }
  }
  arrived_.NotifyAll();
}

std::optional<PreflightListener::Received> PreflightListener::WaitFor(
    const std::string& token, Clock::time_point deadline) {
  MutexLock lock(mutex_);
  arrived_.WaitUntil(lock, deadline, [&] {
    mutex_.AssertHeld();
    return stopping_ || results_.contains(token);
  });
  auto it = results_.find(token);
  if (it == results_.end()) return std::nullopt;
  return it->second;
}

}  // namespace gantry::agent
