#include "agent/launch/step_pty.h"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/pty_frames.h"
#include "common/write_all.h"

namespace gantry::agent {
namespace {

void Relay(int master_fd, int socket_fd) {
  PtyInputDecoder decoder;
  char buffer[16384];
  bool from_srun = true;  // srun may stop sending and still read
  while (true) {
    pollfd fds[2] = {{master_fd, POLLIN, 0},
                     {from_srun ? socket_fd : -1, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents != 0) {
      const ssize_t got = ::read(master_fd, buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      // EIO: no process has the terminal open any more.
      if (got <= 0) break;
      if (!WriteAll(socket_fd, buffer, static_cast<size_t>(got))) break;
    }
    if (from_srun && fds[1].revents != 0) {
      const ssize_t got = ::read(socket_fd, buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        from_srun = false;
        continue;
      }
      const std::string keys =
          decoder.Feed(std::string_view(buffer, static_cast<size_t>(got)));
      uint16_t rows = 0;
      uint16_t cols = 0;
      if (decoder.TakeResize(rows, cols)) {
        winsize size{};
        size.ws_row = rows;
        size.ws_col = cols;
        // The kernel sends SIGWINCH to the terminal's foreground group.
        ::ioctl(master_fd, TIOCSWINSZ, &size);
      }
      if (!keys.empty() && !WriteAll(master_fd, keys.data(), keys.size())) {
        break;
      }
    }
  }
  ::shutdown(socket_fd, SHUT_RDWR);
  ::close(socket_fd);
  ::close(master_fd);
}

}  // namespace

absl::StatusOr<OpenedPty> OpenStepPty(uid_t uid, gid_t gid) {
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot open a pseudo-terminal: ", std::strerror(errno)));
  }
  char name[128] = {};
  if (::grantpt(master) != 0 || ::unlockpt(master) != 0 ||
      ::ptsname_r(master, name, sizeof name) != 0) {
    const int error = errno;
    ::close(master);
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot set up a pseudo-terminal: ", std::strerror(error)));
  }
  // The task opens it after it has become the job's user.
  if (::chown(name, uid, gid) != 0 || ::chmod(name, 0620) != 0) {
    const int error = errno;
    ::close(master);
    return absl::PermissionDeniedError(
        absl::StrCat("cannot give the pseudo-terminal ", name, " to uid ", uid,
                     ": ", std::strerror(error)));
  }
  return OpenedPty{master, name};
}

void StartPtyRelay(int master_fd, const sockaddr_storage& address,
                   socklen_t address_length, std::string header) {
  const int socket_fd =
      ::socket(address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (socket_fd < 0 ||
      ::connect(socket_fd, reinterpret_cast<const sockaddr*>(&address),
                address_length) != 0 ||
      !WriteAll(socket_fd, header.data(), header.size())) {
    log::Warn(
        "cannot reach srun for a pseudo-terminal; the task runs "
        "without its terminal's other end",
        {{"error", std::strerror(errno)}});
    if (socket_fd >= 0) ::close(socket_fd);
    ::close(master_fd);
    return;
  }
  std::thread([master_fd, socket_fd] { Relay(master_fd, socket_fd); }).detach();
}

}  // namespace gantry::agent
