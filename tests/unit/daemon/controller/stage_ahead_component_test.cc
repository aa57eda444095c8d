// Staging ahead through the real Controller (features/datasets/),
// with fake agent links and a fake clock: a waiting job's backfill
// reservation gets one DatasetPrefetch per reserved node and dataset, as
// its user and pinned for it; later passes do not send again; `gantry job`
// shows each copy's state; nothing goes to a node without an agent, for a
// root job, or with --stage-ahead 0; and a cancelled job is forgotten.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "daemon/controller/controller.h"
#include "daemon/controller/core/agent_link.h"
#include "tests/unit/support/controller_harness.h"

namespace gantry {
namespace stage_ahead_component_test {

// Records the prefetches the controller sends to one node.
class PrefetchLink : public AgentLink {
 public:
  void Send(const v1::ControllerMessage& message) override {
    if (message.has_dataset_prefetch()) {
      prefetches.push_back(message.dataset_prefetch());
    }
  }
  void Close() override {}
  void Close(const absl::Status&) override {}
  std::string Peer() const override { return "fake"; }

  std::vector<v1::DatasetPrefetch> prefetches;
};

class Harness : public ControllerHarness {
 public:
  explicit Harness(int64_t window_ms = 3'600'000)
      : ControllerHarness(Options(window_ms)) {
    for (const char* name : {"n1", "n2"}) {
      links[name] = std::make_shared<PrefetchLink>();
      RegisterNode(links[name], name);
    }
  }

  static ControllerOptions Options(int64_t window_ms) {
    ControllerOptions options;
    FeatureSettings features;
    features.stage_ahead.window_ms = window_ms;
    options.features = StandardFeatures(features);
    return options;
  }

  uint64_t Submit(const Caller& caller, uint32_t nodes,
                  std::vector<std::string> required, bool with_dataset) {
    v1::SubmitRequest submit;
    v1::JobSpec& spec = *submit.mutable_spec();
    spec.set_script("#!/bin/sh\ntrue\n");
    spec.set_working_dir("/tmp");
    spec.set_nodes(nodes);
    spec.set_exclusive(true);
    spec.set_time_limit_seconds(600);
    for (const std::string& node : required) spec.add_required_nodes(node);
    if (with_dataset) {
      v1::DatasetRef& dataset = *spec.add_datasets();
      dataset.set_name("train");
      dataset.set_path("/shared/train");
    }
    const uint64_t id = SubmitAccepted(submit, caller);
    Pump();
    return id;
  }

  v1::JobRecord Job(uint64_t id) {
    absl::StatusOr<v1::GetJobResponse> response =
        controller_->GetJob(JobId(id), kRoot);
    REQUIRE(response.ok());
    return response->job();
  }

  void Answer(const std::string& node, const v1::DatasetPrefetch& prefetch,
              bool ok) {
    v1::AgentMessage message;
    v1::DatasetCacheResult& result = *message.mutable_dataset_cache_result();
    result.set_request_id(prefetch.request_id());
    result.set_ok(ok);
    result.set_message(ok ? "" : "no space left on node " + node);
    result.set_bytes_total(4096);
    result.set_bytes_copied(ok ? 4096 : 0);
    controller_->OnAgentMessage(links[node], message);
    Pump();
  }

  // A job holding n1 until its time limit, so a 2-node job waits with a
  // reservation on n1 and n2.
  uint64_t HoldN1() {
    const uint64_t holder = Submit(kBob, 1, {"n1"}, false);
    REQUIRE(Job(holder).state() == v1::RUNNING);
    return holder;
  }

  size_t Sent() const {
    size_t sent = 0;
    for (const auto& [name, link] : links) sent += link->prefetches.size();
    return sent;
  }

  std::map<std::string, std::shared_ptr<PrefetchLink>> links;
};

TEST_CASE("a waiting job's dataset is prefetched once to each reserved node",
          "[stage_ahead][controller]") {
  Harness h;
  h.HoldN1();
  const uint64_t waiting = h.Submit(kAlice, 2, {}, true);
  REQUIRE(h.Job(waiting).state() == v1::PENDING);
  for (const char* node : {"n1", "n2"}) {
    INFO(node);
    const std::vector<v1::DatasetPrefetch>& sent = h.links[node]->prefetches;
    REQUIRE(sent.size() == 1);
    CHECK(sent[0].job_id() == waiting);
    CHECK(sent[0].uid() == kAlice.uid);
    CHECK(sent[0].user() == kAlice.user);
    CHECK(sent[0].dataset().name() == "train");
    CHECK(sent[0].dataset().path() == "/shared/train");
    // The wait (the holder's 600 s limit) plus a margin, bounded.
    CHECK(sent[0].hold_ms() > 600'000);
    CHECK(sent[0].hold_ms() <= 3'600'000 + 900'000);
  }
  v1::JobRecord shown = h.Job(waiting);
  REQUIRE(shown.staged_ahead_size() == 2);
  CHECK(shown.staged_ahead(0).state() == v1::DatasetStagedAhead::COPYING);

  h.Answer("n1", h.links["n1"]->prefetches[0], true);
  h.Answer("n2", h.links["n2"]->prefetches[0], false);
  shown = h.Job(waiting);
  REQUIRE(shown.staged_ahead_size() == 2);
  CHECK(shown.staged_ahead(0).node() == "n1");
  CHECK(shown.staged_ahead(0).state() == v1::DatasetStagedAhead::DONE);
  CHECK(shown.staged_ahead(0).bytes_copied() == 4096);
  CHECK(shown.staged_ahead(1).node() == "n2");
  CHECK(shown.staged_ahead(1).state() == v1::DatasetStagedAhead::FAILED);
  CHECK(shown.staged_ahead(1).message() == "no space left on node n2");

  // Not before the failed one's back-off (30 s)...
  h.clock_.AdvanceMs(29'000);
  h.RunTimers();
  CHECK(h.Sent() == 2);
  // ...after it, the tick wakes a pass: the failed one is sent again, the
  // done one not.
  h.clock_.AdvanceMs(2'000);
  h.RunTimers();
  CHECK(h.links["n1"]->prefetches.size() == 1);
  CHECK(h.links["n2"]->prefetches.size() == 2);
}

TEST_CASE("a cancelled job is sent nothing more", "[stage_ahead][controller]") {
  Harness h;
  const uint64_t holder = h.HoldN1();
  const uint64_t waiting = h.Submit(kAlice, 2, {}, true);
  REQUIRE(h.Sent() == 2);
  v1::CancelRequest cancel;
  cancel.add_job_ids(waiting);
  std::optional<v1::CancelResponse> cancelled;
  h.controller_->Cancel(cancel, kRoot,
                        [&](v1::CancelResponse r) { cancelled = r; });
  CHECK(h.PumpUntil([&] { return cancelled.has_value(); }));
  REQUIRE(h.Job(waiting).state() == v1::CANCELLED);
  CHECK(h.Job(waiting).staged_ahead_size() == 0);
  // Answers that come after it are recorded, and send nothing.
  h.Answer("n1", h.links["n1"]->prefetches[0], false);
  h.clock_.AdvanceMs(3'600'000);
  h.RunTimers();
  CHECK(h.Sent() == 2);
  (void)holder;
}

TEST_CASE("no prefetch for a node without agent, a root job, or when off",
          "[stage_ahead][controller]") {
  SECTION("a node whose agent is gone") {
    Harness h;
    h.HoldN1();
    h.controller_->OnAgentGone(h.links["n2"], "gone");
    h.Pump();
    h.Submit(kAlice, 2, {}, true);
    CHECK(h.links["n2"]->prefetches.empty());
  }
  SECTION("a root job: agents refuse to copy as root") {
    Harness h;
    h.HoldN1();
    h.Submit(kRoot, 2, {}, true);
    CHECK(h.Sent() == 0);
  }
  SECTION("--stage-ahead 0") {
    Harness h(0);
    h.HoldN1();
    h.Submit(kAlice, 2, {}, true);
    CHECK(h.Sent() == 0);
  }
  SECTION("a job without datasets") {
    Harness h;
    h.HoldN1();
    h.Submit(kAlice, 2, {}, false);
    CHECK(h.Sent() == 0);
  }
}

}  // namespace stage_ahead_component_test
}  // namespace gantry
