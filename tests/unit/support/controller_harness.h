// The real Controller on an io_context the test pumps, with the in-memory
// store and a fake clock: the base of the controller's component tests.
// StopController then StartController is a restart over the same store.
//
// Not thread-safe: the test's thread runs the loop.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include "common/clock.h"
#include "daemon/controller/controller.h"
#include "tests/unit/support/memory_store.h"

namespace gantry {

// Callers of the component tests: two users and an admin.
inline const Caller kAlice{.uid = 1000, .gid = 1000, .user = "alice"};
inline const Caller kBob{.uid = 1001, .gid = 1001, .user = "bob"};
inline const Caller kRoot{.uid = 0, .gid = 0, .user = "root", .admin = true};

// The ids of `jobs`, in their order.
inline std::vector<uint64_t> Ids(const std::vector<v1::JobRecord>& jobs) {
  std::vector<uint64_t> ids;
  for (const v1::JobRecord& job : jobs) ids.push_back(job.id());
  return ids;
}

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

  // Lets the controller's periodic timer (250 ms) run its passes, such as
  // retention, once the fake clock has moved.
  void RunTimers() {
    io_.run_for(std::chrono::milliseconds(1300));
    io_.restart();
  }

  ControllerOptions options_;  // read by the next StartController
  boost::asio::io_context io_;
  MemoryStore store_;
  FakeClock clock_;
  std::optional<Controller> controller_;
};

}  // namespace gantry
