// Time as an injected dependency, so the controller's timers and the
// scheduler can be driven by a fake clock in tests and in virtual time by
// the trace simulator.
#pragma once

#include <atomic>
#include <cstdint>

namespace gantry {

// Wall-clock milliseconds since the Unix epoch. Implementations are
// thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t NowMs() const = 0;
  // Monotonic nanoseconds from an arbitrary origin, for measuring how long
  // something took (never goes back when the wall clock is set).
  virtual int64_t MonotonicNs() const = 0;
};

// The system clock.
class RealClock final : public Clock {
 public:
  int64_t NowMs() const override;
  int64_t MonotonicNs() const override;
};

// A clock that moves only when told to; its monotonic time moves with it.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t start_ms = 1'700'000'000'000)
      : now_ms_(start_ms) {}
  int64_t NowMs() const override { return now_ms_.load(); }
  int64_t MonotonicNs() const override { return now_ms_.load() * 1'000'000; }
  void AdvanceMs(int64_t delta_ms) { now_ms_ += delta_ms; }
  void SetMs(int64_t now_ms) { now_ms_ = now_ms; }

 private:
  std::atomic<int64_t> now_ms_;
};

// The monotonic clock in milliseconds: what the controller's timers (node
// deadlines, time limits, grace periods) count on, so that a step of the
// wall clock (an NTP step, an admin's `date -s`) neither fires them early
// nor holds them back.
inline int64_t MonotonicMs(const Clock& clock) {
  return clock.MonotonicNs() / 1'000'000;
}

// Time since a moment a record holds in wall-clock milliseconds (a job's
// start, its last progress), counted on the monotonic clock from when this
// process set the moment (Mark) or first saw it (and again whenever the
// record's value changes). Only the part before that is wall-clock time: a
// record written before a restart or by another controller. Not
// thread-safe.
class SteadyElapsed {
 public:
  int64_t SinceMs(int64_t wall_ms, const Clock& clock);
  // The record's moment `wall_ms` was set just now (from clock.NowMs()):
  // tied to the monotonic clock at once, so that a step before the next
  // SinceMs is not counted either.
  void Mark(int64_t wall_ms, const Clock& clock);

 private:
  bool seen_ = false;
  int64_t wall_ms_ = 0;
  int64_t monotonic_ms_ = 0;  // the moment, on the monotonic clock
};

}  // namespace gantry
