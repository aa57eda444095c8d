// The straggler feature with a whole controller (features/stragglers/):
// ranks report their steps (ReportProgress with a rank), the fake clock
// moves, the periodic check finds the slow node, and the next checkpoint
// swaps it out (--straggler-policy=swap) or does not (report).
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <catch2/catch.hpp>

#include "daemon/controller/controller.h"
#include "daemon/controller/core/agent_link.h"
#include "daemon/controller/features/standard_features.h"
#include "tests/unit/support/controller_harness.h"
#include "tests/unit/support/silent_agent_link.h"

namespace gantry {
namespace straggler_swap_test {

ControllerOptions StragglerOptions(StragglerResponse response) {
  ControllerOptions options;
  options.node_timeout_ms = 60'000;  // heartbeats are not the subject
  FeatureSettings features;
  features.stragglers.response = response;
  features.stragglers.policy.slow_factor = 1.5;
  features.stragglers.policy.min_duration_ms = 2'000;
  features.stragglers.policy.min_peers = 2;
  features.stragglers.policy.stale_ms = 5'000;
  features.stragglers.heartbeat_interval_ms = options.heartbeat_interval_ms;
  options.features = StandardFeatures(features);
  return options;
}

class StragglerHarness : public ControllerHarness {
 public:
  explicit StragglerHarness(StragglerResponse response)
      : ControllerHarness(StragglerOptions(response)) {
    for (int i = 1; i <= 5; ++i) {
      links_.push_back(std::make_shared<SilentLink>());
      RegisterNode(links_.back(), "n" + std::to_string(i));
    }
  }

  uint64_t SubmitFourNodes() {
    v1::JobSpec spec;
    spec.set_nodes(4);
    spec.set_name("train");
    spec.set_script("#!/bin/sh\ntrain\n");
    spec.set_working_dir("/tmp");
    spec.set_max_restarts(0);  // a swap must not need the budget
    const uint64_t id = SubmitSpec(spec, kAlice);
    REQUIRE(PumpUntil([&] { return Get(id).job().state() == v1::RUNNING; }));
    return id;
  }

  v1::GetJobResponse Get(uint64_t id) {
    absl::StatusOr<v1::GetJobResponse> job =
        controller_->GetJob(JobId(id), kRoot);
    REQUIRE(job.ok());
    return *job;
  }

  absl::Status Report(uint64_t id, int64_t step, std::optional<uint32_t> rank,
                      double seconds, const std::string& checkpoint = "") {
    v1::ReportProgressRequest request;
    request.set_job_id(id);
    request.set_step(step);
    if (rank) request.set_rank(*rank);
    request.set_step_seconds(seconds);
    request.set_checkpoint_path(checkpoint);
    std::optional<absl::Status> answer;
    controller_->ReportProgress(request, kAlice,
                                [&](absl::Status status) { answer = status; });
    REQUIRE(PumpUntil([&] { return answer.has_value(); }));
    return *answer;
  }

  // Every rank reports step `step`; rank 1 takes 3 s a step, the others
  // 1 s. Then the fake clock moves `ms` and the periodic check runs.
  void Steps(uint64_t id, int64_t from, int64_t to, int64_t ms) {
    for (int64_t step = from; step <= to; ++step) {
      for (uint32_t rank = 0; rank < 4; ++rank) {
        REQUIRE(Report(id, step, rank, rank == 1 ? 3.0 : 1.0).ok());
      }
      clock_.AdvanceMs(ms);
      io_.run_for(std::chrono::milliseconds(260));
      io_.restart();
    }
  }

  std::vector<std::shared_ptr<SilentLink>> links_;
};

TEST_CASE("swap: the straggler is drained at the next checkpoint, uncharged",
          "[controller][straggler]") {
  StragglerHarness h(StragglerResponse::kSwap);
  const uint64_t id = h.SubmitFourNodes();
  const v1::JobRecord started = h.Get(id).job();
  const std::string slow_node = started.allocation(1).node();

  h.Steps(id, 1, 2, 500);
  // Slow, but not yet for long enough.
  CHECK(h.Get(id).progress().stragglers().empty());
  h.Steps(id, 3, 10, 500);
  v1::GetJobResponse view = h.Get(id);
  REQUIRE(view.progress().stragglers_size() == 1);
  const v1::Straggler& straggler = view.progress().stragglers(0);
  CHECK(straggler.node() == slow_node);
  CHECK(straggler.rank() == 1);
  CHECK(straggler.slowdown() == Approx(3.0));
  CHECK(straggler.action() == "swap at the next checkpoint");
  CHECK(view.progress().nodes_size() == 4);

  REQUIRE(h.Report(id, 10, std::nullopt, 0, "/ckpt/10").ok());
  const v1::JobRecord job = h.Get(id).job();
  REQUIRE(job.attempts_size() >= 1);
  CHECK(job.attempts(0).end_reason() == "Straggler");
  CHECK(job.attempts(0).end_detail().find(slow_node) != std::string::npos);
  CHECK(job.uncharged_attempts() == 1);
  CHECK(job.state() != v1::FAILED);
  CHECK(job.latest_checkpoint().path() == "/ckpt/10");
  bool drained = false;
  const v1::ListNodesResponse nodes = h.controller_->ListNodes();
  for (const v1::NodeRecord& node : nodes.nodes()) {
    if (node.name() != slow_node) continue;
    drained = node.drained();
    CHECK(node.drain_reason().rfind(
              "straggler: 3.0x slower than peers in job " + std::to_string(id),
              0) == 0);
  }
  CHECK(drained);
}

TEST_CASE("report: a checkpoint restarts nothing", "[controller][straggler]") {
  StragglerHarness h(StragglerResponse::kReport);
  const uint64_t id = h.SubmitFourNodes();
  h.Steps(id, 1, 10, 500);
  v1::GetJobResponse view = h.Get(id);
  REQUIRE(view.progress().stragglers_size() == 1);
  CHECK(view.progress().stragglers(0).action() == "report");
  REQUIRE(h.Report(id, 10, std::nullopt, 0, "/ckpt/10").ok());
  const v1::JobRecord job = h.Get(id).job();
  CHECK(job.state() == v1::RUNNING);
  CHECK(job.attempts_size() == 1);
  CHECK(job.uncharged_attempts() == 0);
}

TEST_CASE("a rank the job does not have is refused",
          "[controller][straggler]") {
  StragglerHarness h(StragglerResponse::kReport);
  const uint64_t id = h.SubmitFourNodes();
  absl::Status refused = h.Report(id, 1, 9, 1.0);
  CHECK(refused.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(refused.message()) ==
        "job " + std::to_string(id) + " has no rank 9 (ranks 0-3)");
  // Without a step, a rank's report is plain progress.
  CHECK(h.Report(id, -1, 9, 0).ok());
}

}  // namespace straggler_swap_test
}  // namespace gantry
