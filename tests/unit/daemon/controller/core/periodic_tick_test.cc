// The controller's periodic tick: numbered from 1, each says how late it
// ran on the controller's clock, and none runs once stopped.
#include "daemon/controller/core/periodic_tick.h"

#include <chrono>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <catch2/catch.hpp>

namespace gantry {
namespace periodic_tick_test {

struct Harness {
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type>
      work = boost::asio::make_work_guard(io);
  FakeClock clock;
  std::vector<uint64_t> ticks;
  std::vector<int64_t> late;
  PeriodicTick tick{io, clock, std::chrono::milliseconds(5),
                    [this](uint64_t n, int64_t late_ms) {
                      ticks.push_back(n);
                      late.push_back(late_ms);
                    }};

  void RunUntilTicks(size_t n) {
    const auto give_up =
        std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (ticks.size() < n && std::chrono::steady_clock::now() < give_up) {
      io.run_one_for(std::chrono::milliseconds(50));
    }
  }
};

TEST_CASE("ticks are numbered from 1 and say how late they ran",
          "[periodic_tick]") {
  Harness h;
  h.tick.Start();
  // The loop was busy 25 ms past the first tick's due time.
  h.clock.AdvanceMs(30);
  h.RunUntilTicks(3);
  REQUIRE(h.ticks.size() >= 3);
  CHECK(h.ticks[0] == 1);
  CHECK(h.ticks[1] == 2);
  CHECK(h.ticks[2] == 3);
  CHECK(h.late[0] == 25);
  CHECK(h.late[1] == 0);  // the fake clock stood still since
}

TEST_CASE("no tick runs once stopped", "[periodic_tick]") {
  Harness h;
  h.tick.Start();
  h.RunUntilTicks(1);
  REQUIRE(h.ticks.size() == 1);
  h.tick.Stop();
  h.io.run_for(std::chrono::milliseconds(50));
  CHECK(h.ticks.size() == 1);
}

}  // namespace periodic_tick_test
}  // namespace gantry
