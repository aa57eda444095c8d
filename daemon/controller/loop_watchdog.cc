#include "daemon/controller/loop_watchdog.h"

namespace gantry {

LoopWatchdog::LoopWatchdog(boost::asio::io_context& io,
                           std::chrono::microseconds interval,
                           std::function<void()> ping)
    : timer_(io), interval_(interval), ping_(std::move(ping)) {}

void LoopWatchdog::Start() {
  if (interval_.count() <= 0 || running_) return;
  running_ = true;
  ping_();
  Arm();
}

void LoopWatchdog::Stop() {
  running_ = false;
  timer_.cancel();
}

void LoopWatchdog::Arm() {
  timer_.expires_after(interval_);
  timer_.async_wait([this](const boost::system::error_code& error) {
    if (error || !running_) return;
    ping_();
    Arm();
  });
}

}  // namespace gantry
