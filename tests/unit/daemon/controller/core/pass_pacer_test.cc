// When scheduling passes run: asks fold into the pass already due, an ask
// made during a pass gets the next one, a long pass holds the next back
// by the gap factor, none runs while leadership is unsure or once stopped.
#include "daemon/controller/core/pass_pacer.h"

#include <chrono>

#include <boost/asio/executor_work_guard.hpp>
#include <catch2/catch.hpp>

namespace gantry {
namespace pass_pacer_test {

struct Harness {
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type>
      work = boost::asio::make_work_guard(io);
  FakeClock clock;
  int passes = 0;
  int64_t pass_ms = 0;  // how long each pass takes on the fake clock
  bool may_act = true;
  bool ask_during_pass = false;
  std::vector<int64_t> durations_ns;
  PassPacer pacer{
      io,
      clock,
      {.may_act = [this] { return may_act; },
       .run_pass =
           [this] {
             ++passes;
             clock.AdvanceMs(pass_ms);
             if (ask_during_pass) {
               ask_during_pass = false;
               pacer.Request();
             }
           },
       .pass_done = [this](int64_t ns) { durations_ns.push_back(ns); }}};

  void RunFor(int ms) {
    io.run_for(std::chrono::milliseconds(ms));
    io.restart();
  }
};

TEST_CASE("asks made before a pass runs fold into it", "[pass_pacer]") {
  Harness h;
  h.pacer.Request();
  h.pacer.Request();
  h.pacer.Request();
  h.io.poll();
  CHECK(h.passes == 1);
  CHECK(h.durations_ns == std::vector<int64_t>{0});
}

TEST_CASE("an ask made during a pass gets a pass of its own", "[pass_pacer]") {
  Harness h;
  h.ask_during_pass = true;
  h.pacer.Request();
  h.io.poll();
  CHECK(h.passes == 2);
}

TEST_CASE("a long pass holds the next back by the gap factor", "[pass_pacer]") {
  Harness h;
  h.pass_ms = 50;
  h.pacer.Request();
  h.io.poll();
  REQUIRE(h.passes == 1);
  CHECK(h.durations_ns == std::vector<int64_t>{50'000'000});
  // The next may start 4 x 50 ms after the first ended: not at once...
  h.pacer.Request();
  h.io.poll();
  CHECK(h.passes == 1);
  // ...but once the gap has passed (the wait runs on the loop's timer).
  h.RunFor(400);
  CHECK(h.passes == 2);
}

TEST_CASE("no pass while leadership is unsure, and the ask waits for it",
          "[pass_pacer]") {
  Harness h;
  h.may_act = false;
  h.pacer.Request();
  h.RunFor(250);
  CHECK(h.passes == 0);
  h.may_act = true;
  h.RunFor(250);
  CHECK(h.passes == 1);
}

TEST_CASE("no pass once stopped", "[pass_pacer]") {
  Harness h;
  h.pacer.Request();
  h.pacer.Stop();
  h.io.poll();
  h.pacer.Request();
  h.io.poll();
  CHECK(h.passes == 0);
}

}  // namespace pass_pacer_test
}  // namespace gantry
