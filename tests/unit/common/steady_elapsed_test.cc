// SteadyElapsed: time since a record's wall-clock moment, counted on the
// monotonic clock once seen, so that stepping the wall clock (NTP, date -s)
// neither ends a time limit early nor stretches it.

#include <catch2/catch.hpp>
#include <cstdint>

#include "common/clock.h"

namespace gantry {
namespace steady_elapsed_test {

// A clock whose wall time can be stepped without the monotonic time moving,
// as a real step leaves CLOCK_MONOTONIC.
class SteppableClock final : public Clock {
 public:
  int64_t NowMs() const override { return wall_ms_; }
  int64_t MonotonicNs() const override { return monotonic_ms_ * 1'000'000; }
  void Advance(int64_t ms) {
    wall_ms_ += ms;
    monotonic_ms_ += ms;
  }
  void StepWall(int64_t ms) { wall_ms_ += ms; }

 private:
  int64_t wall_ms_ = 1'800'000'000'000;
  int64_t monotonic_ms_ = 5'000;
};

TEST_CASE("A wall-clock step after the moment is seen changes nothing",
          "[clock]") {
  SteppableClock clock;
  SteadyElapsed running_for;
  const int64_t start = clock.NowMs();
  CHECK(running_for.SinceMs(start, clock) == 0);
  clock.Advance(10'000);
  clock.StepWall(3'600'000);  // an hour forward
  CHECK(running_for.SinceMs(start, clock) == 10'000);
  clock.StepWall(-7'200'000);  // an hour before the start
  clock.Advance(5'000);
  CHECK(running_for.SinceMs(start, clock) == 15'000);
}

TEST_CASE(
    "A moment from before this process is measured on the wall clock "
    "once, then on the monotonic clock",
    "[clock]") {
  SteppableClock clock;
  SteadyElapsed running_for;
  const int64_t written_by_another_controller = clock.NowMs() - 60'000;
  CHECK(running_for.SinceMs(written_by_another_controller, clock) == 60'000);
  clock.StepWall(3'600'000);
  clock.Advance(1'000);
  CHECK(running_for.SinceMs(written_by_another_controller, clock) == 61'000);
}

TEST_CASE("A new value in the record starts the count again", "[clock]") {
  SteppableClock clock;
  SteadyElapsed quiet_for;
  CHECK(quiet_for.SinceMs(clock.NowMs(), clock) == 0);
  clock.Advance(30'000);
  const int64_t progress = clock.NowMs();
  CHECK(quiet_for.SinceMs(progress, clock) == 0);
  clock.Advance(2'000);
  CHECK(quiet_for.SinceMs(progress, clock) == 2'000);
}

TEST_CASE("A moment marked when set ignores a step before it is read",
          "[clock]") {
  SteppableClock clock;
  SteadyElapsed running_for;
  const int64_t start = clock.NowMs();
  running_for.Mark(start, clock);
  // Stepped two hours forward before anything asked how long it ran: the
  // job has run 200 ms, not two hours (a lab run timed a job out so).
  clock.StepWall(7'200'000);
  clock.Advance(200);
  CHECK(running_for.SinceMs(start, clock) == 200);
}

TEST_CASE("A moment in the future counts from now", "[clock]") {
  SteppableClock clock;
  SteadyElapsed running_for;
  // Written by a controller whose clock was ahead of this one's.
  CHECK(running_for.SinceMs(clock.NowMs() + 3'600'000, clock) == 0);
  clock.Advance(4'000);
  CHECK(running_for.SinceMs(clock.NowMs() - 4'000 + 3'600'000, clock) == 4'000);
}

}  // namespace steady_elapsed_test
}  // namespace gantry
