// When the controller's scheduling passes run. A pass is asked for by
// anything that may let a job start (a submission, a job's end, a node
// back); asks that come while one is already due fold into it. A pass
// over a long queue is the dearest thing the loop does: while asks keep
// coming (a submission flood, a fleet registering), the next pass waits
// kGapFactor times the last one's duration, so passes take at most about
// a fifth of the loop and requests keep being served; a short pass leaves
// no noticeable pause. While `may_act` says no (a replicated controller
// whose leadership is not confirmed), no pass runs: it is looked at again
// every 100 ms.
//
// Threading: the loop thread of `io` only.
#pragma once

#include <cstdint>
#include <functional>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "common/clock.h"

namespace gantry {

class PassPacer {
 public:
  static constexpr int kGapFactor = 4;

  struct Hooks {
    // Whether this controller may decide now (null: always).
    std::function<bool()> may_act;
    // The pass itself; asks made during it are for the next one.
    std::function<void()> run_pass;
    // A pass ran, taking `duration_ns`.
    std::function<void(int64_t duration_ns)> pass_done;
  };

  PassPacer(boost::asio::io_context& io, const Clock& clock, Hooks hooks);
  PassPacer(const PassPacer&) = delete;
  PassPacer& operator=(const PassPacer&) = delete;

  // Asks for a pass: posted at once, or once the gap after the last pass
  // has passed. Nothing once stopped.
  void Request();
  // No pass runs from now on; the pending wait is cancelled.
  void Stop();

 private:
  void Run();

  boost::asio::io_context& io_;
  const Clock& clock_;
  const Hooks hooks_;
  boost::asio::steady_timer timer_;
  bool requested_ = false;  // a pass is posted or waits for its gap
  bool held_back_ = false;  // the last look found may_act false
  bool stopped_ = false;
  int64_t next_allowed_ns_ = 0;  // Clock::MonotonicNs
};

}  // namespace gantry
