#include "common/clock.h"

#include <algorithm>
#include <chrono>

namespace gantry {

int64_t RealClock::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t RealClock::MonotonicNs() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void SteadyElapsed::Mark(int64_t wall_ms, const Clock& clock) {
  seen_ = true;
  wall_ms_ = wall_ms;
  monotonic_ms_ = MonotonicMs(clock);
}

int64_t SteadyElapsed::SinceMs(int64_t wall_ms, const Clock& clock) {
  const int64_t now = MonotonicMs(clock);
  if (!seen_ || wall_ms != wall_ms_) {
    seen_ = true;
    wall_ms_ = wall_ms;
    // A moment in the future (a clock behind the one that wrote it) is
    // taken as now.
    monotonic_ms_ = now - std::max<int64_t>(0, clock.NowMs() - wall_ms);
  }
  return now - monotonic_ms_;
}

}  // namespace gantry
