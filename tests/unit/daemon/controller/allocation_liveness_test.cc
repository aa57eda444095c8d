// Interactive allocations kept by their clients (srun or salloc outside a
// job, Slurm's InactiveLimit): the deadline bookkeeping on its own, then
// the real Controller on a fake clock: a silent client's allocation ends
// (TIMEOUT or, pending, CANCELLED, reason InactiveLimit, durably), a kept
// one does not, keepalives are the owner's, and a controller restart gives
// clients a grace period instead of ending every allocation at once.
#include "daemon/controller/core/allocation_liveness.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/unit/support/controller_harness.h"

namespace gantry {
namespace allocation_liveness_test {

TEST_CASE("an allocation not heard from by its deadline expires once",
          "[allocation_liveness]") {
  AllocationLiveness liveness(1000);
  liveness.Heard(1, 10'000);
  liveness.Heard(2, 10'500);
  CHECK(liveness.TakeExpired(11'000).empty());  // 1's deadline is 11'000
  CHECK(liveness.TakeExpired(11'001) == std::vector<uint64_t>{1});
  CHECK_FALSE(liveness.tracked(1));
  // Heard again in time: 2 lives on past its first deadline.
  liveness.Heard(2, 11'400);
  CHECK(liveness.TakeExpired(12'000).empty());
  CHECK(liveness.TakeExpired(12'401) == std::vector<uint64_t>{2});
  CHECK(liveness.size() == 0);
  CHECK(liveness.TakeExpired(99'999).empty());  // each expires once
}

TEST_CASE("expired allocations come out earliest first",
          "[allocation_liveness]") {
  AllocationLiveness liveness(100);
  liveness.Heard(7, 300);
  liveness.Heard(5, 100);
  liveness.Heard(6, 200);
  CHECK(liveness.TakeExpired(1000) == std::vector<uint64_t>{5, 6, 7});
}

TEST_CASE("a late keepalive never pulls a deadline back",
          "[allocation_liveness]") {
  AllocationLiveness liveness(1000);
  // A restart's grace reaches further than one keepalive would.
  liveness.Track(1, 50'000);
  liveness.Heard(1, 10'000);
  CHECK(liveness.TakeExpired(49'000).empty());
  CHECK(liveness.TakeExpired(50'001) == std::vector<uint64_t>{1});
}

TEST_CASE("forgotten allocations never expire, and a stall postpones all",
          "[allocation_liveness]") {
  AllocationLiveness liveness(1000);
  liveness.Heard(1, 0);
  liveness.Heard(2, 0);
  liveness.Forget(1);
  liveness.Forget(42);  // unknown: nothing
  liveness.Postpone(5000);
  CHECK(liveness.TakeExpired(5999).empty());
  CHECK(liveness.TakeExpired(6001) == std::vector<uint64_t>{2});
}

TEST_CASE("no limit: nothing is tracked and nothing expires",
          "[allocation_liveness]") {
  AllocationLiveness liveness(0);
  CHECK_FALSE(liveness.enabled());
  liveness.Heard(1, 0);
  liveness.Track(2, 0);
  CHECK(liveness.size() == 0);
  CHECK(liveness.TakeExpired(1'000'000).empty());
}

// The controller's side.

class NullLink final : public AgentLink {
 public:
  void Send(const v1::ControllerMessage&) override {}
  void Close() override {}
  void Close(const absl::Status&) override {}
  std::string Peer() const override { return "test"; }
};

constexpr int64_t kLimitMs = 1000;
constexpr int64_t kGraceMs = 3000;

ControllerOptions LivenessOptions() {
  ControllerOptions options;
  options.inactive_limit_ms = kLimitMs;
  options.reconnect_grace_ms = kGraceMs;
  // The node stays up without heartbeats: only the allocations' clients
  // are under test.
  options.node_timeout_ms = 3'600'000;
  return options;
}

class Harness : public ControllerHarness {
 public:
  Harness() : ControllerHarness(LivenessOptions()) {}

  void RegisterNode() { ControllerHarness::RegisterNode(link_); }

  uint64_t SubmitAllocation(const Caller& caller = kAlice) {
    v1::SubmitRequest submit;
    v1::JobSpec& spec = *submit.mutable_spec();
    spec.set_name("interactive");
    spec.set_working_dir("/tmp");
    spec.set_allocation_only(true);
    return Submit(std::move(submit), caller);
  }

  uint64_t SubmitBatch() {
    v1::SubmitRequest submit;
    v1::JobSpec& spec = *submit.mutable_spec();
    spec.set_name("batch");
    spec.set_script("#!/bin/sh\ntrue\n");
    spec.set_working_dir("/tmp");
    return Submit(std::move(submit), kAlice);
  }

  absl::StatusOr<v1::KeepAllocationResponse> Keep(
      uint64_t id, const Caller& caller = kAlice) {
    v1::KeepAllocationRequest request;
    request.set_job_id(id);
    return controller_->KeepAllocation(request, caller);
  }

  v1::JobRecord Job(uint64_t id) {
    absl::StatusOr<v1::GetJobResponse> job =
        controller_->GetJob(JobId(id), kRoot);
    REQUIRE(job.ok());
    return job->job();
  }

  // Moves the fake clock `ms` in 200 ms steps, letting the periodic timer
  // (every 250 ms of real time) run after each, so the controller never
  // takes the test for a stalled loop. `each_step` runs first in every
  // step (the keepalives of the clients that are alive).
  void Advance(
      int64_t ms, const std::function<void()>& each_step = [] {}) {
    for (int64_t moved = 0; moved < ms; moved += 200) {
      each_step();
      clock_.AdvanceMs(200);
      io_.run_for(std::chrono::milliseconds(260));
      io_.restart();
    }
  }

 private:
  uint64_t Submit(v1::SubmitRequest submit, const Caller& caller) {
    std::optional<absl::StatusOr<JobId>> submitted;
    controller_->Submit(std::move(submit), caller,
                        [&](absl::StatusOr<JobId> id) { submitted = id; });
    REQUIRE(PumpUntil([&] { return submitted.has_value(); }));
    INFO(submitted->status().ToString());
    REQUIRE(submitted->ok());
    return (*submitted)->value();
  }

  std::shared_ptr<NullLink> link_ = std::make_shared<NullLink>();
};

TEST_CASE(
    "a running allocation whose client goes silent ends TIMEOUT "
    "(InactiveLimit), durably, one kept alive runs on",
    "[controller][allocation_liveness]") {
  Harness h;
  h.RegisterNode();
  const uint64_t silent = h.SubmitAllocation();
  const uint64_t kept = h.SubmitAllocation();
  REQUIRE(h.PumpUntil([&] {
    return h.Job(silent).state() == v1::RUNNING &&
           h.Job(kept).state() == v1::RUNNING;
  }));

  // Five limits long, with a keepalive for one of them every step.
  h.Advance(5 * kLimitMs, [&] { REQUIRE(h.Keep(kept).ok()); });
  const v1::JobRecord ended = h.Job(silent);
  CHECK(ended.state() == v1::TIMEOUT);
  CHECK(ended.reason() == "InactiveLimit");
  CHECK_THAT(ended.reason_detail(),
             Catch::Contains("not heard from for 1 s (InactiveLimit)"));
  REQUIRE(ended.attempts_size() == 1);
  CHECK(ended.attempts(0).end_reason() == "InactiveLimit");
  CHECK(h.Job(kept).state() == v1::RUNNING);

  // Its client, if it comes back, learns that it is over.
  absl::StatusOr<v1::KeepAllocationResponse> late = h.Keep(silent);
  REQUIRE(late.ok());
  CHECK(late->state() == v1::TIMEOUT);
  CHECK(late->reason() == "InactiveLimit");

  // The end went through the store like any other.
  h.StopController();
  h.StartController();
  CHECK(h.Job(silent).state() == v1::TIMEOUT);
  CHECK(h.Job(silent).reason() == "InactiveLimit");
}

TEST_CASE("a pending allocation whose client goes silent is cancelled",
          "[controller][allocation_liveness]") {
  Harness h;  // no node: it cannot start
  const uint64_t id = h.SubmitAllocation();
  h.Advance(kLimitMs / 2);
  CHECK(h.Job(id).state() == v1::PENDING);
  h.Advance(kLimitMs);
  const v1::JobRecord job = h.Job(id);
  CHECK(job.state() == v1::CANCELLED);
  CHECK(job.reason() == "InactiveLimit");
}

TEST_CASE("only the owner (or an admin) keeps an allocation, and only one",
          "[controller][allocation_liveness]") {
  Harness h;
  h.RegisterNode();
  const uint64_t id = h.SubmitAllocation();
  const uint64_t batch = h.SubmitBatch();

  absl::StatusOr<v1::KeepAllocationResponse> answer = h.Keep(id);
  REQUIRE(answer.ok());
  CHECK(answer->interval_ms() == kLimitMs / 3);
  CHECK(h.Keep(id, kRoot).ok());
  CHECK(h.Keep(id, kBob).status().code() ==
        absl::StatusCode::kPermissionDenied);
  CHECK(h.Keep(batch).status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(h.Keep(999).status().code() == absl::StatusCode::kNotFound);

  // Bob's keepalives do not keep Alice's allocation.
  h.Advance(3 * kLimitMs, [&] { (void)h.Keep(id, kBob); });
  CHECK(h.Job(id).state() == v1::TIMEOUT);
}

TEST_CASE(
    "after a controller restart the clients get a grace period, then the "
    "limit again",
    "[controller][allocation_liveness]") {
  Harness h;
  h.RegisterNode();
  const uint64_t kept = h.SubmitAllocation();
  const uint64_t abandoned = h.SubmitAllocation();
  REQUIRE(h.PumpUntil([&] { return h.Job(kept).state() == v1::RUNNING; }));
  REQUIRE(h.PumpUntil([&] { return h.Job(abandoned).state() == v1::RUNNING; }));

  // The controller is away for longer than the limit.
  h.StopController();
  h.clock_.AdvanceMs(5 * kLimitMs);
  h.StartController();
  h.RegisterNode();
  // Well past the limit, within the grace: nothing ended.
  h.Advance(kGraceMs - 600);
  CHECK(h.Job(kept).state() == v1::RUNNING);
  CHECK(h.Job(abandoned).state() == v1::RUNNING);

  // One client is back; the other never comes.
  h.Advance(4 * kLimitMs, [&] { REQUIRE(h.Keep(kept).ok()); });
  CHECK(h.Job(kept).state() == v1::RUNNING);
  CHECK(h.Job(abandoned).state() == v1::TIMEOUT);
  CHECK(h.Job(abandoned).reason() == "InactiveLimit");
}

TEST_CASE("an allocation its client ends is no longer watched",
          "[controller][allocation_liveness]") {
  Harness h;
  h.RegisterNode();
  const uint64_t id = h.SubmitAllocation();
  REQUIRE(h.PumpUntil([&] { return h.Job(id).state() == v1::RUNNING; }));
  v1::EndAllocationRequest end;
  end.set_job_id(id);
  std::optional<absl::Status> ended;
  h.controller_->EndAllocation(end, kAlice,
                               [&](absl::Status status) { ended = status; });
  REQUIRE(h.PumpUntil([&] { return ended.has_value(); }));
  REQUIRE(ended->ok());
  h.Advance(3 * kLimitMs);
  const v1::JobRecord job = h.Job(id);
  CHECK(job.state() == v1::COMPLETED);
  CHECK(job.reason() != "InactiveLimit");
}

}  // namespace allocation_liveness_test
}  // namespace gantry
