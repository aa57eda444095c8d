// The real Controller on an io_context the test pumps, with the in-memory
// store and a fake clock: the base of the controller's component tests.
// StopController then StartController is a restart over the same store.
//
// Not thread-safe: the test's thread runs the loop.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include "common/clock.h"
#include "daemon/controller/controller.h"
#include "daemon/controller/features/standard_features.h"
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
  // Runs the features gantryd runs unless `options` names its own.
  explicit ControllerHarness(ControllerOptions options)
      : options_(std::move(options)) {
    if (options_.features.empty()) options_.features = StandardFeatures();
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

  // sacct's call, waited for: the controller answers it from its history
  // thread, which needs nothing of the loop.
  absl::StatusOr<v1::AccountingResponse> Accounting(
      const v1::AccountingRequest& request, const Caller& caller) {
    std::promise<absl::StatusOr<v1::AccountingResponse>> answered;
    std::future<absl::StatusOr<v1::AccountingResponse>> answer =
        answered.get_future();
    controller_->Accounting(
        request, caller, [&](absl::StatusOr<v1::AccountingResponse> response) {
          answered.set_value(std::move(response));
        });
    return answer.get();
  }

  // Runs what is ready on the loop, the store writer's completions among
  // it, without moving the fake clock.
  void Pump() {
    io_.run_for(std::chrono::milliseconds(20));
    io_.restart();
  }
  // Pumps until `done` holds, for at most about five seconds.
  bool PumpUntil(const std::function<bool()>& done) {
    for (int i = 0; i < 250 && !done(); ++i) Pump();
    return done();
  }

  // Submits as `caller` and runs the loop until the submission is stored;
  // the test fails unless it is accepted.
  uint64_t SubmitAccepted(const v1::SubmitRequest& request,
                          const Caller& caller) {
    std::optional<absl::StatusOr<JobId>> submitted;
    controller_->Submit(request, caller,
                        [&](absl::StatusOr<JobId> id) { submitted = id; });
    REQUIRE(PumpUntil([&] { return submitted.has_value(); }));
    INFO(submitted->status().ToString());
    REQUIRE(submitted->ok());
    return (*submitted)->value();
  }

  // The same for a request that is only `spec`.
  uint64_t SubmitSpec(const v1::JobSpec& spec, const Caller& caller) {
    v1::SubmitRequest submit;
    *submit.mutable_spec() = spec;
    return SubmitAccepted(submit, caller);
  }

  // Registers node `name` (8 CPUs, 16 GB, no GPUs) on `link`, as its
  // agent's stream.
  void RegisterNode(const std::shared_ptr<AgentLink>& link,
                    const std::string& name = "n1") {
    v1::AgentMessage message;
    v1::Register& reg = *message.mutable_register_();
    reg.set_node_name(name);
    reg.set_address("192.0.2.1");
    reg.set_boot_id("boot-1");
    reg.set_agent_instance("instance-1");
    reg.set_agent_version("test");
    reg.mutable_inventory()->set_cpus(8);
    reg.mutable_inventory()->set_memory_mb(16'000);
    controller_->OnAgentMessage(link, message);
    Pump();
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
