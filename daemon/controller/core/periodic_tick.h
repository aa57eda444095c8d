// The controller's periodic tick: every `interval` on the loop, `on_tick`
// runs with the tick's number (from 1) and how late it ran on the
// controller's monotonic clock (a loop busy elsewhere delays it; the lag
// is the loop-lag metric). The next tick is armed after the last one ran,
// so a slow tick is never run twice at once.
//
// Threading: the loop thread of `io` only.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "common/clock.h"

namespace gantry {

class PeriodicTick {
 public:
  using OnTick = std::function<void(uint64_t tick, int64_t late_ms)>;

  PeriodicTick(boost::asio::io_context& io, const Clock& clock,
               std::chrono::milliseconds interval, OnTick on_tick);
  PeriodicTick(const PeriodicTick&) = delete;
  PeriodicTick& operator=(const PeriodicTick&) = delete;

  // Arms the first tick; call once.
  void Start() { Arm(); }
  // No tick runs from now on.
  void Stop();

 private:
  void Arm();

  const Clock& clock_;
  const std::chrono::milliseconds interval_;
  const OnTick on_tick_;
  boost::asio::steady_timer timer_;
  bool stopped_ = false;
  uint64_t ticks_ = 0;
  int64_t due_ms_ = 0;  // monotonic; when the armed tick should run
};

}  // namespace gantry
