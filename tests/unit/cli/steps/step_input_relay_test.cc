#include "cli/steps/step_input_relay.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>
#include <thread>

namespace gantry::cli {
namespace step_input_relay_test {

// A task's end of its stdin connection, and the end the relay gets.
struct Connection {
  int task = -1;
  int relay = -1;
};

Connection Connect() {
  int fds[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
  return {fds[0], fds[1]};
}

// Everything the task reads until end of file, with "<stalled>" or
// "<error>" at the end when none came within 10 s (no Catch2 assertions:
// it runs on a thread of its own too).
std::string ReadToEnd(int fd) {
  std::string text;
  char buffer[4096];
  while (true) {
    pollfd ready = {fd, POLLIN, 0};
    if (::poll(&ready, 1, 10000) != 1) return text + "<stalled>";
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0) return text + "<error>";
    if (got == 0) return text;
    text.append(buffer, static_cast<size_t>(got));
  }
}

bool Readable(int fd, int timeout_ms) {
  pollfd ready = {fd, POLLIN, 0};
  return ::poll(&ready, 1, timeout_ms) == 1;
}

TEST_CASE("every task reads the source, then end of file",
          "[step_input_relay]") {
  int source[2];
  REQUIRE(::pipe(source) == 0);
  StepInputRelay relay;
  Connection first = Connect();
  Connection second = Connect();
  relay.Attach(0, first.relay);
  relay.Start(2, source[0], /*owns_source=*/true);
  // Nothing is read until the second task has connected.
  REQUIRE(::write(source[1], "hi\n", 3) == 3);
  CHECK_FALSE(Readable(first.task, 200));
  relay.Attach(1, second.relay);
  // More than the sockets' buffers hold at once.
  const std::string big(3 << 20, 'x');
  std::thread writer([&] {
    size_t sent = 0;
    while (sent < big.size()) {
      const ssize_t wrote =
          ::write(source[1], big.data() + sent, big.size() - sent);
      if (wrote <= 0) break;  // the comparison below then fails
      sent += static_cast<size_t>(wrote);
    }
    ::close(source[1]);
  });
  std::string second_read;
  std::thread reader([&] { second_read = ReadToEnd(second.task); });
  const std::string first_read = ReadToEnd(first.task);
  reader.join();
  writer.join();
  CHECK(first_read == "hi\n" + big);
  CHECK(second_read == "hi\n" + big);
  relay.Stop();
  ::close(first.task);
  ::close(second.task);
}

TEST_CASE("a task that is gone does not hold up the others",
          "[step_input_relay]") {
  int source[2];
  REQUIRE(::pipe(source) == 0);
  StepInputRelay relay;
  Connection gone = Connect();
  Connection reading = Connect();
  relay.Attach(0, gone.relay);
  relay.Attach(1, reading.relay);
  ::close(gone.task);
  relay.Start(2, source[0], /*owns_source=*/true);
  REQUIRE(::write(source[1], "data\n", 5) == 5);
  ::close(source[1]);
  CHECK(ReadToEnd(reading.task) == "data\n");
  relay.Stop();
  ::close(reading.task);
}

TEST_CASE("without a source the tasks read end of file at once",
          "[step_input_relay]") {
  StepInputRelay relay;
  Connection task = Connect();
  relay.Attach(0, task.relay);
  relay.Start(1, -1, false);
  CHECK(ReadToEnd(task.task).empty());
  relay.Stop();
  // Connections after the step ended are closed.
  Connection late = Connect();
  relay.Attach(1, late.relay);
  CHECK(ReadToEnd(late.task).empty());
  ::close(task.task);
  ::close(late.task);
}

}  // namespace step_input_relay_test
}  // namespace gantry::cli
