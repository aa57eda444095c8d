// The watchdog pings from the loop, and only while the loop turns.
#include "daemon/controller/loop_watchdog.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

namespace gantry {
namespace loop_watchdog_test {

using std::chrono::milliseconds;

TEST_CASE("pings every interval while the loop runs", "[watchdog]") {
  boost::asio::io_context io;
  int pings = 0;
  LoopWatchdog watchdog(io, milliseconds(10), [&] { ++pings; });
  watchdog.Start();
  CHECK(pings == 1);  // at once, so READY=1 is followed by a ping
  io.run_for(milliseconds(105));
  CHECK(pings >= 5);
  watchdog.Stop();
  int stopped_at = pings;
  io.restart();
  io.run_for(milliseconds(50));
  CHECK(pings == stopped_at);
}

TEST_CASE("a stuck loop does not ping", "[watchdog]") {
  boost::asio::io_context io;
  int pings = 0;
  LoopWatchdog watchdog(io, milliseconds(10), [&] { ++pings; });
  watchdog.Start();
  // A handler that blocks the loop for 100 ms: no ping can happen meanwhile.
  boost::asio::post(io,
                    [&] { std::this_thread::sleep_for(milliseconds(100)); });
  io.run_one();  // the blocking handler
  CHECK(pings == 1);
}

TEST_CASE("no interval, no watchdog", "[watchdog]") {
  boost::asio::io_context io;
  int pings = 0;
  LoopWatchdog watchdog(io, milliseconds(0), [&] { ++pings; });
  watchdog.Start();
  io.run_for(milliseconds(20));
  CHECK(pings == 0);
}

}  // namespace loop_watchdog_test
}  // namespace gantry
