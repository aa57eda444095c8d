// The RDMA port watcher: on this machine (no HCA: nothing to watch, no
// thread), and its thread, queue and clean stop driven through pipes
// standing in for device async-event fds.

#include "agent/discovery/port_watcher.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace gantry::agent {
namespace port_watcher_test {

using std::chrono::milliseconds;

// A non-blocking pipe whose bytes become events (the byte is the port).
struct FakeDevice {
  int fds[2] = {-1, -1};
  std::atomic<int> reads{0};

  FakeDevice() { REQUIRE(pipe2(fds, O_NONBLOCK | O_CLOEXEC) == 0); }
  ~FakeDevice() {
    for (int fd : fds) {
      if (fd >= 0) close(fd);
    }
  }
  void Emit(std::vector<uint8_t> ports) {
    REQUIRE(write(fds[1], ports.data(), ports.size()) ==
            static_cast<ssize_t>(ports.size()));
  }
  PortWatcher::Source AsSource(std::string name, int copies = 1) {
    return {fds[0], [this, name, copies](std::vector<PortEvent>* out) {
              ++reads;
              uint8_t buffer[64];
              ssize_t n;
              while ((n = read(fds[0], buffer, sizeof(buffer))) > 0) {
                for (ssize_t i = 0; i < n; ++i) {
                  for (int c = 0; c < copies; ++c) {
                    PortEvent e;
                    e.device = name;
                    e.port = buffer[i];
                    e.event = buffer[i] % 2 ? "PORT_ACTIVE" : "PORT_ERR";
                    out->push_back(std::move(e));
                  }
                }
              }
            }};
  }
};

// Takes events until `count` events arrived or two seconds passed.
std::vector<PortEvent> TakeEventsUntil(PortWatcher& watcher, size_t count) {
  std::vector<PortEvent> all;
  const auto deadline = std::chrono::steady_clock::now() + milliseconds(2000);
  while (all.size() < count && std::chrono::steady_clock::now() < deadline) {
    for (PortEvent& e : watcher.TakeEvents()) all.push_back(std::move(e));
    std::this_thread::sleep_for(milliseconds(5));
  }
  return all;
}

size_t InfinibandSysfsDevices() {
  std::error_code ec;
  size_t n = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator("/sys/class/infiniband", ec)) {
    (void)entry;
    ++n;
  }
  return n;
}

TEST_CASE("on a machine without HCAs the watcher watches nothing") {
  absl::StatusOr<std::unique_ptr<PortWatcher>> watcher = PortWatcher::Start();
  INFO(watcher.status().ToString());
  REQUIRE(watcher.ok());
  if (InfinibandSysfsDevices() == 0) {
    CHECK((*watcher)->source_count() == 0);
    CHECK_FALSE((*watcher)->running());
  } else {
    // A machine with HCAs (the GPU test host): each device is watched.
    CHECK((*watcher)->source_count() == InfinibandSysfsDevices());
    CHECK((*watcher)->running());
  }
  CHECK((*watcher)->TakeEvents().empty());
  (*watcher)->Stop();
  (*watcher)->Stop();  // idempotent
  CHECK_FALSE((*watcher)->running());
}

TEST_CASE("events from two sources are queued in order and drained once") {
  FakeDevice a;
  FakeDevice b;
  absl::StatusOr<std::unique_ptr<PortWatcher>> started =
      PortWatcher::TEST_StartWithSources(
          {a.AsSource("mlx5_0"), b.AsSource("mlx5_1")});
  REQUIRE(started.ok());
  PortWatcher& watcher = **started;
  CHECK(watcher.running());
  CHECK(watcher.source_count() == 2);

  a.Emit({1, 2});
  std::vector<PortEvent> events = TakeEventsUntil(watcher, 2);
  REQUIRE(events.size() == 2);
  CHECK(events[0].device == "mlx5_0");
  CHECK(events[0].port == 1);
  CHECK(events[0].event == "PORT_ACTIVE");
  CHECK(events[1].port == 2);
  CHECK(events[1].event == "PORT_ERR");
  CHECK_FALSE(events[1].now.has_value());

  b.Emit({7});
  events = TakeEventsUntil(watcher, 1);
  REQUIRE(events.size() == 1);
  CHECK(events[0].device == "mlx5_1");
  CHECK(watcher.TakeEvents().empty());

  const auto before = std::chrono::steady_clock::now();
  watcher.Stop();
  CHECK(std::chrono::steady_clock::now() - before < milliseconds(1000));
  CHECK_FALSE(watcher.running());
  CHECK(watcher.dropped() == 0);
}

TEST_CASE("a full queue drops the oldest events and counts them") {
  FakeDevice a;
  const int copies = static_cast<int>(PortWatcher::kMaxQueued) + 10;
  absl::StatusOr<std::unique_ptr<PortWatcher>> started =
      PortWatcher::TEST_StartWithSources({a.AsSource("mlx5_0", copies)});
  REQUIRE(started.ok());
  a.Emit({3});
  const auto deadline = std::chrono::steady_clock::now() + milliseconds(2000);
  while ((*started)->dropped() == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  CHECK((*started)->dropped() == 10);
  CHECK((*started)->TakeEvents().size() == PortWatcher::kMaxQueued);
}

TEST_CASE("a source that hangs up is dropped, not spun on") {
  FakeDevice a;
  absl::StatusOr<std::unique_ptr<PortWatcher>> started =
      PortWatcher::TEST_StartWithSources({a.AsSource("mlx5_0")});
  REQUIRE(started.ok());
  close(a.fds[1]);
  a.fds[1] = -1;
  std::this_thread::sleep_for(milliseconds(200));
  CHECK(a.reads.load() <= 2);
  CHECK((*started)->running());
  // The destructor stops it.
}

}  // namespace port_watcher_test
}  // namespace gantry::agent
