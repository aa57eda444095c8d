// Pings a watchdog from an Asio event loop: a steady_timer on the loop
// calls `ping` every `interval`. The ping only happens when the loop gets
// round to the timer, so a loop that is stuck (a handler that never
// returns, a deadlock) stops pinging and systemd's WatchdogSec= restarts
// the daemon. gantryd runs it on the controller's io_context with
// systemd::NotifyWatchdog as `ping`.
//
// Not thread-safe: construct, Start and Stop on the loop's thread (or
// before the loop runs).
#pragma once

#include <chrono>
#include <functional>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

namespace gantry {

class LoopWatchdog {
 public:
  // A zero `interval` means no watchdog: Start does nothing.
  LoopWatchdog(boost::asio::io_context& io, std::chrono::microseconds interval,
               std::function<void()> ping);

  // Pings once now, then every interval until Stop.
  void Start();
  void Stop();

 private:
  void Arm();

  boost::asio::steady_timer timer_;
  const std::chrono::microseconds interval_;
  const std::function<void()> ping_;
  bool running_ = false;
};

}  // namespace gantry
