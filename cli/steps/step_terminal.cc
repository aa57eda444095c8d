#include "cli/steps/step_terminal.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>

#include "common/pty_frames.h"
#include "common/write_all.h"

namespace gantry::cli {
namespace {

// SIGWINCH's handler writes here (one process, one terminal).
std::atomic<int> winch_write_fd{-1};

void OnWindowChange(int) {
  const int fd = winch_write_fd;
  if (fd >= 0) {
    ssize_t ignored = ::write(fd, "w", 1);
    (void)ignored;
  }
}

bool SendWindowSize(int socket_fd) {
  winsize size{};
  if (::ioctl(STDIN_FILENO, TIOCGWINSZ, &size) != 0 || size.ws_row == 0) {
    return true;  // not a terminal: the remote one keeps its default
  }
  const std::string frame = EncodePtyWindowSize(size.ws_row, size.ws_col);
  return WriteAll(socket_fd, frame.data(), frame.size());
}

}  // namespace

StepTerminal::StepTerminal() {
  if (::pipe2(stop_, O_CLOEXEC) != 0) stop_[0] = stop_[1] = -1;
}

StepTerminal::~StepTerminal() {
  Join();
  if (stop_[0] >= 0) ::close(stop_[0]);
  if (stop_[1] >= 0) ::close(stop_[1]);
}

void StepTerminal::Attach(int socket_fd) {
  if (attached_.exchange(true)) {
    ::close(socket_fd);  // one terminal per step
    return;
  }
  relaying_ = true;
  thread_ = std::thread([this, socket_fd] { Relay(socket_fd); });
}

void StepTerminal::Join() {
  if (!attached_ || !thread_.joinable()) return;
  // The remote side closes once the task's terminal has no process; a
  // stray one holding it must not keep us here.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::thread watchdog([this, deadline] {
    while (std::chrono::steady_clock::now() < deadline) {
      if (!relaying_) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (stop_[1] >= 0) {
      ssize_t ignored = ::write(stop_[1], "x", 1);
      (void)ignored;
    }
  });
  thread_.join();
  watchdog.join();
}

void StepTerminal::Relay(int socket_fd) {
  int winch[2] = {-1, -1};
  if (::pipe2(winch, O_CLOEXEC | O_NONBLOCK) == 0) {
    winch_write_fd = winch[1];
    struct sigaction action {};
    action.sa_handler = &OnWindowChange;
    action.sa_flags = SA_RESTART;
    ::sigaction(SIGWINCH, &action, nullptr);
  }
  termios saved{};
  const bool terminal =
      ::isatty(STDIN_FILENO) && ::tcgetattr(STDIN_FILENO, &saved) == 0;
  if (terminal) {
    termios raw = saved;
    ::cfmakeraw(&raw);
    ::tcsetattr(STDIN_FILENO, TCSADRAIN, &raw);
  }
  SendWindowSize(socket_fd);
  bool reading_stdin = true;
  char buffer[16384];
  while (true) {
    pollfd fds[4] = {{socket_fd, POLLIN, 0},
                     {reading_stdin ? STDIN_FILENO : -1, POLLIN, 0},
                     {winch[0], POLLIN, 0},
                     {stop_[0], POLLIN, 0}};
    if (::poll(fds, 4, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[3].revents != 0) break;
    if (fds[0].revents != 0) {
      const ssize_t got = ::read(socket_fd, buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;  // the remote terminal is gone
      WriteAll(STDOUT_FILENO, buffer, static_cast<size_t>(got));
    }
    if (reading_stdin && fds[1].revents != 0) {
      const ssize_t got = ::read(STDIN_FILENO, buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        // Our input ended (not a terminal): the remote one gets its
        // end-of-file character, and we go on reading its output.
        reading_stdin = false;
        const std::string eof = "\x04";
        WriteAll(socket_fd, eof.data(), eof.size());
        continue;
      }
      const std::string keys =
          EncodePtyInput(std::string_view(buffer, static_cast<size_t>(got)));
      if (!WriteAll(socket_fd, keys.data(), keys.size())) break;
    }
    if (fds[2].revents != 0) {
      char drained[64];
      while (::read(winch[0], drained, sizeof drained) > 0) {
      }
      SendWindowSize(socket_fd);
    }
  }
  if (terminal) ::tcsetattr(STDIN_FILENO, TCSADRAIN, &saved);
  ::signal(SIGWINCH, SIG_DFL);
  winch_write_fd = -1;
  if (winch[0] >= 0) ::close(winch[0]);
  if (winch[1] >= 0) ::close(winch[1]);
  ::close(socket_fd);
  relaying_ = false;
}

}  // namespace gantry::cli
