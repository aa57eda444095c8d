// When scheduling passes run (pass_pacer.h).
#include "daemon/controller/core/pass_pacer.h"

#include <chrono>
#include <utility>

#include <boost/asio/post.hpp>

#include "common/log.h"

namespace gantry {

PassPacer::PassPacer(boost::asio::io_context& io, const Clock& clock,
                     Hooks hooks)
    : io_(io), clock_(clock), hooks_(std::move(hooks)), timer_(io) {}

void PassPacer::Request() {
  if (requested_ || stopped_) return;
  requested_ = true;
  const int64_t wait_ns = next_allowed_ns_ - clock_.MonotonicNs();
  if (wait_ns <= 0) {
    boost::asio::post(io_, [this] {
      if (!stopped_) Run();
    });
    return;
  }
  timer_.expires_after(std::chrono::nanoseconds(wait_ns));
  timer_.async_wait([this](const boost::system::error_code& error) {
    if (!error && !stopped_) Run();
  });
}

void PassPacer::Stop() {
  stopped_ = true;
  timer_.cancel();
}

void PassPacer::Run() {
  if (hooks_.may_act && !hooks_.may_act()) {
    // Not sure to lead any more: decide nothing; look again shortly (the
    // lease is confirmed again, or this controller steps down).
    if (!held_back_) {
      log::Warn(
          "not scheduling: this controller's leadership is not confirmed "
          "(its etcd lease lapsed)");
      held_back_ = true;
    }
    timer_.expires_after(std::chrono::milliseconds(100));
    timer_.async_wait([this](const boost::system::error_code& error) {
      if (!error && !stopped_) Run();
    });
    return;
  }
  if (held_back_) {
    log::Info("scheduling again: leadership confirmed");
    held_back_ = false;
  }
  requested_ = false;
  const int64_t start_ns = clock_.MonotonicNs();
  hooks_.run_pass();
  const int64_t end_ns = clock_.MonotonicNs();
  next_allowed_ns_ = end_ns + kGapFactor * (end_ns - start_ns);
  if (hooks_.pass_done) hooks_.pass_done(end_ns - start_ns);
}

}  // namespace gantry
