#include "cli/steps/step_input_relay.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace gantry::cli {

StepInputRelay::StepInputRelay() {
  if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) wake_[0] = wake_[1] = -1;
  thread_ = std::thread([this] { Run(); });
}

StepInputRelay::~StepInputRelay() {
  Stop();
  if (wake_[0] >= 0) ::close(wake_[0]);
  if (wake_[1] >= 0) ::close(wake_[1]);
  if (owns_source_ && source_fd_ >= 0) ::close(source_fd_);
}

void StepInputRelay::Wake() {
  if (wake_[1] >= 0) {
    ssize_t ignored = ::write(wake_[1], "x", 1);
    (void)ignored;
  }
}

void StepInputRelay::Attach(uint32_t, int fd) {
  {
    MutexLock lock(mutex_);
    if (!stopping_) {
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
      incoming_.push_back(fd);
      ++attached_;
      fd = -1;
    }
  }
  if (fd >= 0) ::close(fd);
  Wake();
}

void StepInputRelay::Start(uint32_t connections, int source_fd,
                           bool owns_source) {
  {
    MutexLock lock(mutex_);
    source_fd_ = source_fd;
    owns_source_ = owns_source;
    expected_ = connections;
    expecting_ = true;
    start_by_ = std::chrono::steady_clock::now() + kStartAfter;
  }
  Wake();
}

void StepInputRelay::Stop() {
  {
    MutexLock lock(mutex_);
    stopping_ = true;
  }
  Wake();
  if (thread_.joinable()) thread_.join();
}

bool StepInputRelay::Flush(Sink& sink) {
  while (!sink.pending.empty()) {
    const ssize_t sent =
        ::send(sink.fd, sink.pending.data(), sink.pending.size(), MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (sent <= 0) return false;  // the task is gone
    sink.pending.erase(0, static_cast<size_t>(sent));
  }
  return true;
}

void StepInputRelay::Run() {
  std::vector<Sink> sinks;
  int source_fd = -1;
  bool source_open = true;
  bool started = false;
  char buffer[65536];
  while (true) {
    int timeout_ms = -1;
    {
      MutexLock lock(mutex_);
      if (stopping_) break;
      for (int fd : incoming_) sinks.push_back(Sink{fd, "", false});
      incoming_.clear();
      if (!started && expecting_) {
        const auto now = std::chrono::steady_clock::now();
        started = attached_ >= expected_ || now >= start_by_;
        source_fd = source_fd_;
        source_open = source_fd >= 0;
        if (!started) {
          timeout_ms = static_cast<int>(
              std::chrono::duration_cast<std::chrono::milliseconds>(start_by_ -
                                                                    now)
                  .count() +
              1);
        }
      }
    }
    // The end reaches each task once everything before it has.
    for (Sink& sink : sinks) {
      if (started && !source_open && !sink.shut && sink.pending.empty()) {
        ::shutdown(sink.fd, SHUT_WR);
        sink.shut = true;
      }
    }
    size_t most_pending = 0;
    for (const Sink& sink : sinks) {
      most_pending = std::max(most_pending, sink.pending.size());
    }
    // Nobody left to read it: the source stays unread (and the next
    // program on srun's stdin gets it).
    const bool read_source =
        started && source_open && !sinks.empty() && most_pending < kMaxPending;
    std::vector<pollfd> fds;
    fds.push_back({wake_[0], POLLIN, 0});
    fds.push_back({read_source ? source_fd : -1, POLLIN, 0});
    for (const Sink& sink : sinks) {
      const short events =
          static_cast<short>(POLLIN | (sink.pending.empty() ? 0 : POLLOUT));
      fds.push_back({sink.fd, events, 0});
    }
    if (::poll(fds.data(), fds.size(), timeout_ms) < 0 && errno != EINTR) {
      break;
    }
    if (fds[0].revents != 0) {
      char drained[64];
      while (::read(wake_[0], drained, sizeof drained) > 0) {
      }
    }
    if (fds[1].revents != 0) {
      const ssize_t got = ::read(source_fd, buffer, sizeof buffer);
      if (got > 0) {
        for (Sink& sink : sinks) {
          if (!sink.shut) sink.pending.append(buffer, static_cast<size_t>(got));
        }
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        source_open = false;
      }
    }
    std::vector<Sink> kept;
    for (size_t i = 0; i < sinks.size(); ++i) {
      Sink& sink = sinks[i];
      const short revents = fds[i + 2].revents;
      bool alive = true;
      if ((revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
        // The task writes nothing here that matters; its end of the
        // connection closing means it is gone.
        const ssize_t got = ::read(sink.fd, buffer, sizeof buffer);
        alive = got > 0 || (got < 0 && (errno == EINTR || errno == EAGAIN));
      }
      if (alive) alive = Flush(sink);
      if (alive) {
        kept.push_back(std::move(sink));
      } else {
        ::close(sink.fd);
      }
    }
    sinks = std::move(kept);
  }
  for (const Sink& sink : sinks) ::close(sink.fd);
  MutexLock lock(mutex_);
  for (int fd : incoming_) ::close(fd);
  incoming_.clear();
}

}  // namespace gantry::cli
