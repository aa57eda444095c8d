// The controller's periodic tick (periodic_tick.h).
#include "daemon/controller/core/periodic_tick.h"

#include <algorithm>
#include <utility>

namespace gantry {

PeriodicTick::PeriodicTick(boost::asio::io_context& io, const Clock& clock,
                           std::chrono::milliseconds interval, OnTick on_tick)
    : clock_(clock),
      interval_(interval),
      on_tick_(std::move(on_tick)),
      timer_(io) {}

void PeriodicTick::Stop() {
  stopped_ = true;
  timer_.cancel();
}

void PeriodicTick::Arm() {
  if (stopped_) return;
  timer_.expires_after(interval_);
  due_ms_ = MonotonicMs(clock_) + interval_.count();
  timer_.async_wait([this](const boost::system::error_code& error) {
    if (error || stopped_) return;
    on_tick_(++ticks_, std::max<int64_t>(0, MonotonicMs(clock_) - due_ms_));
    Arm();
  });
}

}  // namespace gantry
