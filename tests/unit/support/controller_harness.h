// The real Controller on an io_context the test pumps, with the in-memory
// store and a fake clock: the base of the controller's component tests.
// StopController then StartController is a restart over the same store.
//
// Not thread-safe: the test's thread runs the loop.
#pragma once

#include <optional>
#include <utility>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include "common/clock.h"
#include "daemon/controller/controller.h"
#include "tests/unit/support/memory_store.h"

namespace gantry {

class ControllerHarness {
 public:
  explicit ControllerHarness(ControllerOptions options)
      : options_(std::move(options)) {
    StartController();
  }
  ~ControllerHarness() { StopController(); }
  ControllerHarness(const ControllerHarness&) = delete;
  ControllerHarness& operator=(const ControllerHarness&) = delete;

  void StartController() {
    controller_.emplace(io_, store_, clock_, options_);
    REQUIRE(controller_->Start().ok());
  }
  // As a crash would, except that the writer finishes the batch it has.
  void StopController() {
    if (!controller_) return;
    controller_->Stop();
    io_.poll();
    controller_.reset();
    io_.restart();
  }

  ControllerOptions options_;  // read by the next StartController
  boost::asio::io_context io_;
  MemoryStore store_;
  FakeClock clock_;
  std::optional<Controller> controller_;
};

}  // namespace gantry
