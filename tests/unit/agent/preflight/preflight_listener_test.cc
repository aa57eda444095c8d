// The pre-flight listener under connections that are not a check's peer
// (agent/preflight/preflight_listener.h, agent/preflight/preflight_pending.h):
// idle or junk connections never keep a proven peer out, a header with a token
// no check here expects is dropped, and a sender that comes before the check is
// taken once it is expected.
#include "agent/preflight/preflight_listener.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "agent/preflight/preflight_pending.h"
#include "agent/preflight/preflight_wire.h"

namespace gantry::agent {
namespace preflight_listener_test {

using Clock = std::chrono::steady_clock;

// A connection to 127.0.0.1:port, or -1.
int ConnectTo(uint32_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) !=
      0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Whether the listener closed `fd` within `wait`.
bool ClosedWithin(int fd, std::chrono::milliseconds wait) {
  pollfd entry{.fd = fd, .events = POLLIN, .revents = 0};
  if (poll(&entry, 1, static_cast<int>(wait.count())) <= 0) return false;
  char byte = 0;
  return recv(fd, &byte, 1, MSG_DONTWAIT) <= 0;
}

TEST_CASE("idle connections beyond every limit do not keep a peer out") {
  auto listener = PreflightListener::Start("127.0.0.1", 0);
  REQUIRE(listener.ok());
  const uint32_t port = (*listener)->port();
  // More than the set of connections still to prove themselves holds, and
  // more than the transfers served at once.
  std::vector<int> idle;
  for (int i = 0; i < 400; ++i) {
    const int fd = ConnectTo(port);
    REQUIRE(fd >= 0);
    idle.push_back(fd);
  }
  const std::string token = "0123456789abcdef";
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  (*listener)->Expect(token, deadline);
  absl::StatusOr<PreflightSendFigures> sent = SendPreflight(
      "127.0.0.1", port, {.token = token, .bytes = 1 << 20}, deadline);
  CHECK(sent.ok());
  std::optional<PreflightListener::Received> received =
      (*listener)->WaitFor(token, deadline);
  REQUIRE(received.has_value());
  CHECK(received->problem == "");
  CHECK(received->mbps > 0);
  for (int fd : idle) close(fd);
}

TEST_CASE("a header with a token no check here expects is dropped") {
  auto listener = PreflightListener::Start("127.0.0.1", 0);
  REQUIRE(listener.ok());
  (*listener)->Expect("aaaa", Clock::now() + std::chrono::seconds(20));
  const int fd = ConnectTo((*listener)->port());
  REQUIRE(fd >= 0);
  const std::string header =
      FormatPreflightHeader({.token = "bbbb", .bytes = 1});
  REQUIRE(send(fd, header.data(), header.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(header.size()));
  CHECK(ClosedWithin(fd, std::chrono::seconds(10)));
  close(fd);
  // Junk too.
  const int junk = ConnectTo((*listener)->port());
  REQUIRE(junk >= 0);
  REQUIRE(send(junk, "GET / HTTP/1.0\n", 15, MSG_NOSIGNAL) == 15);
  CHECK(ClosedWithin(junk, std::chrono::seconds(10)));
  close(junk);
}

TEST_CASE("an idle connection is dropped after its header wait") {
  auto listener = PreflightListener::Start("127.0.0.1", 0);
  REQUIRE(listener.ok());
  const int fd = ConnectTo((*listener)->port());
  REQUIRE(fd >= 0);
  CHECK(ClosedWithin(fd, std::chrono::seconds(10)));
  close(fd);
}

TEST_CASE("a sender that comes before the check is taken once it is expected") {
  auto listener = PreflightListener::Start("127.0.0.1", 0);
  REQUIRE(listener.ok());
  const uint32_t port = (*listener)->port();
  const std::string token = "feedface";
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  auto sending = std::async(std::launch::async, [&] {
    return SendPreflight("127.0.0.1", port, {.token = token, .bytes = 4096},
                         deadline);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  (*listener)->Expect(token, deadline);
  absl::StatusOr<PreflightSendFigures> sent = sending.get();
  CHECK(sent.ok());
  CHECK((*listener)->WaitFor(token, deadline).has_value());
}

TEST_CASE("a transfer the listener never takes is reported as not taken") {
  auto listener = PreflightListener::Start("127.0.0.1", 0);
  REQUIRE(listener.ok());
  absl::StatusOr<PreflightSendFigures> sent = SendPreflight(
      "127.0.0.1", (*listener)->port(), {.token = "0badc0de", .bytes = 4096},
      Clock::now() + std::chrono::seconds(3));
  REQUIRE_FALSE(sent.ok());
  CHECK(absl::IsAborted(sent.status()));
  CHECK_THAT(std::string(sent.status().message()),
             Catch::Contains("did not take the transfer"));
}

TEST_CASE("a full pending set pushes out the oldest of the busiest source") {
  PreflightPendingSet pending(4);
  const Clock::time_point now = Clock::now();
  const auto at = [&](int ms) { return now + std::chrono::milliseconds(ms); };
  CHECK_FALSE(pending.Add(10, "peer", at(1)).has_value());
  CHECK_FALSE(pending.Add(11, "flood", at(2)).has_value());
  CHECK_FALSE(pending.Add(12, "flood", at(3)).has_value());
  CHECK_FALSE(pending.Add(13, "flood", at(4)).has_value());
  // The peer's connection is the oldest, but the flood has the most.
  CHECK(pending.Add(14, "flood", at(5)) == std::optional<int>(11));
  CHECK(pending.Add(15, "flood", at(6)) == std::optional<int>(12));
  CHECK(pending.Find(10) != nullptr);
  CHECK(pending.size() == 4);
  CHECK(pending.NextDeadline() == at(1));
  CHECK(pending.TakeExpired(at(4)) == std::vector<int>{10, 13});
  CHECK(pending.size() == 2);
}

}  // namespace preflight_listener_test
}  // namespace gantry::agent
