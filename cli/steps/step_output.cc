#include "cli/steps/step_output.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/write_all.h"

namespace gantry::cli {
namespace {

constexpr size_t kMaxHeader = 512;
// An agent sends the header as soon as it connects: a connection that has
// not sent it by then is no task's, and must not hold the listener (or
// count as one of the step's connections) for as long as it likes.
constexpr int64_t kHeaderDeadlineMs = 5000;
// Output after the step ended is waited for this long at most: a task's
// stray child holding the socket must not keep gantry run alive.
constexpr int64_t kMaxDrainMs = 10000;

int64_t SteadyNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Our stdout gone: the tasks run on regardless.
void WriteOut(int fd, const char* data, size_t size) {
  if (fd < 0) return;  // dropped (srun -o none, another task's -o TASK)
  (void)gantry::WriteAll(fd, data, size);
}

struct Connection {
  std::string header;  // until the first newline
  int64_t header_deadline_ms = 0;
  bool ready = false;
  uint32_t task = 0;
  int stream = 1;
  int out_fd = 1;
  std::string prefix;   // "TASK: " with --label
  std::string partial;  // a labelled line not yet ended
};

// A copy of one chunk of a task's output for each sattach: "TASK STREAM
// LENGTH\n" and the bytes. A listener that cannot take it at once is
// dropped: a slow reader must not hold up the step's own output.
void Tee(std::set<int>& listeners, uint32_t task, int stream,
         std::string_view data) {
  if (listeners.empty() || data.empty()) return;
  std::string frame = absl::StrCat(task, " ", stream, " ", data.size(), "\n");
  frame.append(data.data(), data.size());
  for (auto it = listeners.begin(); it != listeners.end();) {
    const ssize_t wrote = ::send(*it, frame.data(), frame.size(), MSG_NOSIGNAL);
    if (wrote == static_cast<ssize_t>(frame.size())) {
      ++it;
      continue;
    }
    ::close(*it);
    it = listeners.erase(it);
  }
}

// Closes the connections whose header is overdue (see kHeaderDeadlineMs).
void DropSilentConnections(std::map<int, Connection>& connections,
                           uint32_t& accepted) {
  const int64_t now = SteadyNowMs();
  for (auto it = connections.begin(); it != connections.end();) {
    if (it->second.ready || now < it->second.header_deadline_ms) {
      ++it;
      continue;
    }
    ::close(it->first);
    it = connections.erase(it);
    --accepted;  // no task's
  }
}

// Compares the token without telling, by how long it takes, how much of a
// guess was right.
bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char difference = 0;
  for (size_t i = 0; i < a.size(); ++i) difference |= a[i] ^ b[i];
  return difference == 0;
}

// The address to listen on: the one this host's name resolves to, which is
// where the agents are told to connect (LaunchStepRequest.io_host), when it
// is one address of this host; else every address (inside a job the agents
// reach the node by its --address, which gantry run does not know, and a
// name that resolves to loopback here may resolve otherwise on the nodes).
sockaddr_in6 ListenAddress(const std::string& host) {
  sockaddr_in6 any{};
  any.sin6_family = AF_INET6;
  any.sin6_addr = in6addr_any;
  if (host.empty()) return any;
  addrinfo hints{};
  hints.ai_family = AF_INET6;
  hints.ai_flags = AI_V4MAPPED | AI_ADDRCONFIG;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) return any;
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> addresses(found,
                                                               freeaddrinfo);
  if (found->ai_next != nullptr) return any;  // several: cannot pick one
  sockaddr_in6 address = *reinterpret_cast<sockaddr_in6*>(found->ai_addr);
  const in6_addr& ip = address.sin6_addr;
  const bool loopback = IN6_IS_ADDR_LOOPBACK(&ip) ||
                        (IN6_IS_ADDR_V4MAPPED(&ip) && ip.s6_addr[12] == 127);
  if (loopback) return any;
  address.sin6_port = 0;
  return address;
}

}  // namespace

absl::StatusOr<std::unique_ptr<StepOutputServer>> StepOutputServer::Listen(
    std::string token, bool label, const std::string& host,
    StepOutputRouter router, StepTerminalHandler terminal,
    StepInputHandler input) {
  // This host's address for `host` first; every address when there is
  // none or it cannot be bound.
  const sockaddr_in6 candidates[] = {ListenAddress(host), ListenAddress("")};
  int fd = -1;
  sockaddr_in6 address{};
  int error = 0;
  for (const sockaddr_in6& candidate : candidates) {
    fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      return absl::UnavailableError(
          absl::StrCat("cannot open a socket for the step's output: ",
                       std::strerror(errno)));
    }
    int off = 0;
    ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    address = candidate;
    socklen_t length = sizeof address;
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&candidate),
               sizeof candidate) == 0 &&
        ::listen(fd, 1024) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) ==
            0) {
      break;
    }
    error = errno;
    ::close(fd);
    fd = -1;
  }
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat(
        "cannot listen for the step's output: ", std::strerror(error)));
  }
  std::unique_ptr<StepOutputServer> server(new StepOutputServer(
      fd, ntohs(address.sin6_port), std::move(token), label, std::move(router),
      std::move(terminal), std::move(input)));
  return server;
}

StepOutputServer::StepOutputServer(int listen_fd, uint16_t port,
                                   std::string token, bool label,
                                   StepOutputRouter router,
                                   StepTerminalHandler terminal,
                                   StepInputHandler input)
    : listen_fd_(listen_fd),
      port_(port),
      token_(std::move(token)),
      label_(label),
      router_(std::move(router)),
      terminal_(std::move(terminal)),
      input_(std::move(input)) {
  if (::pipe2(wake_, O_CLOEXEC) != 0) wake_[0] = wake_[1] = -1;
  thread_ = std::thread([this] { Serve(); });
}

StepOutputServer::~StepOutputServer() {
  if (thread_.joinable()) Finish(0, std::chrono::milliseconds(0));
  ::close(listen_fd_);
  if (wake_[0] >= 0) ::close(wake_[0]);
  if (wake_[1] >= 0) ::close(wake_[1]);
}

void StepOutputServer::Finish(uint32_t expected,
                              std::chrono::milliseconds grace) {
  if (!thread_.joinable()) return;
  expected_ = expected;
  give_up_ms_ = SteadyNowMs() + grace.count();
  finishing_ = true;
  if (wake_[1] >= 0) {
    ssize_t ignored = ::write(wake_[1], "x", 1);
    (void)ignored;
  }
  thread_.join();
}

void StepOutputServer::Serve() {
  std::map<int, Connection> connections;
  std::set<int> listeners;  // sattach connections
  uint32_t accepted = 0;
  int64_t drain_deadline = 0;
  char buffer[65536];
  while (true) {
    if (finishing_) {
      const int64_t now = SteadyNowMs();
      if (drain_deadline == 0) drain_deadline = now + kMaxDrainMs;
      const bool all_came = accepted >= expected_ || now >= give_up_ms_;
      if ((connections.empty() && all_came) || now >= drain_deadline) break;
    }
    std::vector<pollfd> fds;
    fds.push_back({listen_fd_, POLLIN, 0});
    if (wake_[0] >= 0) fds.push_back({wake_[0], POLLIN, 0});
    for (const auto& [fd, connection] : connections) {
      fds.push_back({fd, POLLIN, 0});
    }
    for (int fd : listeners) fds.push_back({fd, POLLIN, 0});
    const int ready = ::poll(fds.data(), fds.size(), finishing_ ? 50 : 1000);
    DropSilentConnections(connections, accepted);
    if (ready <= 0) continue;
    for (const pollfd& entry : fds) {
      if (entry.revents == 0) continue;
      if (entry.fd == listen_fd_) {
        int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) {
          Connection connection;
          connection.header_deadline_ms = SteadyNowMs() + kHeaderDeadlineMs;
          connections.emplace(fd, std::move(connection));
          ++accepted;
        }
        continue;
      }
      if (listeners.count(entry.fd)) {
        // sattach sends nothing: data or an end means it is gone.
        ::close(entry.fd);
        listeners.erase(entry.fd);
        continue;
      }
      if (entry.fd == wake_[0]) {
        char drained[16];
        ssize_t ignored = ::read(wake_[0], drained, sizeof drained);
        (void)ignored;
        continue;
      }
      Connection& connection = connections.at(entry.fd);
      ssize_t got = ::read(entry.fd, buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        if (!connection.partial.empty()) {
          connection.partial += '\n';
          WriteOut(connection.out_fd, connection.partial.data(),
                   connection.partial.size());
        }
        ::close(entry.fd);
        connections.erase(entry.fd);
        continue;
      }
      std::string_view data(buffer, static_cast<size_t>(got));
      if (!connection.ready) {
        const size_t newline = data.find('\n');
        connection.header.append(data.substr(0, newline));
        if (newline == std::string_view::npos) {
          if (connection.header.size() > kMaxHeader) {
            ::close(entry.fd);
            connections.erase(entry.fd);
          }
          continue;
        }
        data.remove_prefix(newline + 1);
        std::vector<std::string> words = absl::StrSplit(connection.header, ' ');
        uint32_t task = 0;
        int stream = 0;
        if (words.size() == 3 && ConstantTimeEquals(words[0], token_) &&
            words[2] == "pty" && terminal_) {
          // Task 0's terminal: relayed elsewhere from now on, with what
          // came after the header.
          const int fd = entry.fd;
          connections.erase(entry.fd);
          WriteOut(1, data.data(), data.size());
          terminal_(fd);
          continue;
        }
        if (words.size() == 2 && ConstantTimeEquals(words[0], token_) &&
            words[1] == "attach") {
          // sattach: a copy of what the tasks send from now on.
          const int fd = entry.fd;
          connections.erase(entry.fd);
          --accepted;  // no task's
          ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
          listeners.insert(fd);
          continue;
        }
        if (words.size() == 3 && ConstantTimeEquals(words[0], token_) &&
            words[2] == "0" && absl::SimpleAtoi(words[1], &task)) {
          // A task's stdin: no output comes on it.
          const int fd = entry.fd;
          connections.erase(entry.fd);
          --accepted;
          if (input_) {
            input_(task, fd);
          } else {
            ::close(fd);
          }
          continue;
        }
        if (words.size() != 3 || !ConstantTimeEquals(words[0], token_) ||
            !absl::SimpleAtoi(words[1], &task) ||
            !absl::SimpleAtoi(words[2], &stream) ||
            (stream != 1 && stream != 2)) {
          ::close(entry.fd);  // not one of our tasks
          connections.erase(entry.fd);
          continue;
        }
        connection.ready = true;
        connection.task = task;
        connection.stream = stream;
        connection.out_fd = router_ ? router_(task, stream) : stream;
        if (label_) connection.prefix = absl::StrCat(task, ": ");
      }
      Tee(listeners, connection.task, connection.stream, data);
      if (!label_) {
        WriteOut(connection.out_fd, data.data(), data.size());
        continue;
      }
      // Labelled: whole lines, each with its task's prefix.
      std::string out;
      for (char c : data) {
        if (connection.partial.empty()) connection.partial = connection.prefix;
        connection.partial += c;
        if (c == '\n') {
          out += connection.partial;
          connection.partial.clear();
        }
      }
      WriteOut(connection.out_fd, out.data(), out.size());
    }
  }
  for (auto& [fd, connection] : connections) ::close(fd);
  for (int fd : listeners) ::close(fd);
}

}  // namespace gantry::cli
