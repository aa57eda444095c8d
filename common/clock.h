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

}  // namespace gantry
