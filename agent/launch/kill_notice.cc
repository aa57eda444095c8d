#include "agent/launch/kill_notice.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "agent/launch/user_file_access.h"
#include "common/ids.h"
#include "common/step_io_address.h"

namespace gantry::agent {
namespace {

// Connects to the step's srun within `timeout` and sends the line as task
// 0's stderr.
absl::Status SendToSrun(const KillNoticeTarget& target, const std::string& line,
                        std::chrono::milliseconds timeout) {
  sockaddr_storage address{};
  absl::StatusOr<socklen_t> length =
      ResolveStepIoAddress(target.io_address, address);
  if (!length.ok()) return length.status();
  const int fd = ::socket(address.ss_family,
                          SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot make a socket: ", std::strerror(errno)));
  }
  int error = 0;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), *length) !=
      0) {
    error = errno;
    if (error == EINPROGRESS) {
      pollfd wait{fd, POLLOUT, 0};
      const int ready = ::poll(&wait, 1, static_cast<int>(timeout.count()));
      socklen_t size = sizeof error;
      if (ready <= 0) {
        error = ready == 0 ? ETIMEDOUT : errno;
      } else if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) != 0) {
        error = errno;
      }
    }
  }
  if (error != 0) {
    ::close(fd);
    return absl::UnavailableError(absl::StrCat("cannot reach srun at ",
                                               target.io_address, ": ",
                                               std::strerror(error)));
  }
  // Back to blocking: a few hundred bytes fit in any socket buffer.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  const std::string message = absl::StrCat(target.io_token, " 0 2\n", line);
  // send with MSG_NOSIGNAL: an srun that went away is no SIGPIPE here.
  bool sent = true;
  for (size_t done = 0; done < message.size();) {
    const ssize_t wrote =
        ::send(fd, message.data() + done, message.size() - done, MSG_NOSIGNAL);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) {
      sent = false;
      break;
    }
    done += static_cast<size_t>(wrote);
  }
  error = errno;
  ::close(fd);
  if (!sent) {
    return absl::UnavailableError(absl::StrCat("cannot write to srun at ",
                                               target.io_address, ": ",
                                               std::strerror(error)));
  }
  return absl::OkStatus();
}

}  // namespace

std::string SlurmTimeString(std::time_t when) {
  std::tm local{};
  ::localtime_r(&when, &local);
  char text[32];
  const size_t length = std::strftime(text, sizeof text, "%FT%T", &local);
  return std::string(text, length);
}

std::optional<std::string> FormatKillNotice(uint64_t job_id, uint32_t step,
                                            const std::string& node,
                                            v1::KillRanks::Reason reason,
                                            const std::string& time) {
  const char* why = nullptr;
  switch (reason) {
    case v1::KillRanks::REASON_CANCELLED:
      why = "";
      break;
    case v1::KillRanks::REASON_TIME_LIMIT:
      why = " DUE TO TIME LIMIT";
      break;
    default:
      return std::nullopt;
  }
  const std::string entity =
      step == 0 ? absl::StrCat("JOB ", job_id)
                : absl::StrCat("STEP ", job_id, ".", SlurmStepNumber(step));
  return absl::StrCat("slurmstepd: error: *** ", entity, " ON ", node,
                      " CANCELLED AT ", time, why, " ***\n");
}

absl::Status WriteKillNotice(const KillNoticeTarget& target,
                             const std::string& line,
                             std::chrono::milliseconds timeout) {
  if (!target.io_address.empty()) return SendToSrun(target, line, timeout);
  return AppendToFileAsUser(target.identity, target.error_path, line, timeout);
}

}  // namespace gantry::agent
