// `gantry cache` through the real Controller (features/datasets/):
// a prefetch goes to each node's agent as the caller and its call is
// answered once every node has, or when its wait runs out, or at once
// without a wait; unknown nodes and root's prefetch send nothing; a node
// without an agent fails at once, one that goes away fails its request;
// an eviction goes to the nodes whose reports hold the dataset, another
// user's only for an admin; the listing keeps other users' copies private.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "daemon/controller/features/datasets/datasets_feature.h"
#include "tests/unit/support/controller_harness.h"

namespace gantry {
namespace dataset_cache_controller_test {

// Keeps the cache requests the controller sends the node.
class RecordingLink final : public AgentLink {
 public:
  void Send(const v1::ControllerMessage& message) override {
    if (message.has_dataset_prefetch()) {
      prefetches.push_back(message.dataset_prefetch());
    }
    if (message.has_dataset_evict())
      evictions.push_back(message.dataset_evict());
  }
  void Close() override {}
  void Close(const absl::Status&) override {}
  std::string Peer() const override { return "test"; }
  std::vector<v1::DatasetPrefetch> prefetches;
  std::vector<v1::DatasetEvict> evictions;
};

using Answer = std::optional<absl::StatusOr<v1::DatasetCacheActionResponse>>;

class Harness : public ControllerHarness {
 public:
  Harness() : ControllerHarness(Options()) {
    RegisterNode(n1, "n1");
    RegisterNode(n2, "n2");
  }

  static ControllerOptions Options() {
    ControllerOptions options;
    options.node_timeout_ms = 3'600'000;
    return options;
  }

  v1::PrefetchDatasetRequest Prefetch(uint32_t wait_seconds) {
    v1::PrefetchDatasetRequest request;
    request.mutable_dataset()->set_name("imagenet");
    request.mutable_dataset()->set_path("/shared/imagenet");
    request.add_nodes("n2");
    request.add_nodes("n1");
    request.set_wait_seconds(wait_seconds);
    return request;
  }

  void StartPrefetch(const v1::PrefetchDatasetRequest& request,
                     const Caller& caller, Answer& answer) {
    controller_->FindFeature<DatasetsFeature>()->PrefetchDataset(
        request, caller,
        [&answer](absl::StatusOr<v1::DatasetCacheActionResponse> result) {
          answer = std::move(result);
        });
    Pump();
  }
  void StartEvict(const v1::EvictDatasetRequest& request, const Caller& caller,
                  Answer& answer) {
    controller_->FindFeature<DatasetsFeature>()->EvictDataset(
        request, caller,
        [&answer](absl::StatusOr<v1::DatasetCacheActionResponse> result) {
          answer = std::move(result);
        });
    Pump();
  }

  // `node`'s agent answers request `id`.
  void Reply(const std::shared_ptr<RecordingLink>& link, uint64_t id, bool ok,
             bool hit = false) {
    v1::AgentMessage message;
    v1::DatasetCacheResult& result = *message.mutable_dataset_cache_result();
    result.set_request_id(id);
    result.set_ok(ok);
    result.set_hit(hit);
    result.set_version("v1");
    result.set_bytes_total(100);
    result.set_bytes_copied(hit ? 0 : 100);
    if (!ok) result.set_message("dataset imagenet is in use by job 7");
    controller_->OnAgentMessage(link, message);
    Pump();
  }

  // `link`'s node reports a cache holding `entries`.
  void Report(const std::shared_ptr<RecordingLink>& link,
              const std::vector<v1::CachedDatasetEntry>& entries) {
    v1::AgentMessage message;
    v1::DatasetCacheReport& report =
        *message.mutable_heartbeat()->mutable_dataset_cache();
    for (const v1::CachedDatasetEntry& entry : entries) {
      *report.add_entries() = entry;
    }
    report.set_capacity_bytes(1000);
    controller_->OnAgentMessage(link, message);
    Pump();
  }

  std::shared_ptr<RecordingLink> n1 = std::make_shared<RecordingLink>();
  std::shared_ptr<RecordingLink> n2 = std::make_shared<RecordingLink>();
};

v1::CachedDatasetEntry Entry(uint32_t owner, const std::string& name) {
  v1::CachedDatasetEntry entry;
  entry.set_owner_uid(owner);
  entry.set_name(name);
  entry.set_version("v1");
  entry.set_bytes(100);
  entry.set_source("/shared/" + name);
  return entry;
}

TEST_CASE("a prefetch is sent as the caller and answered once every node has",
          "[dataset_cache_controller]") {
  Harness h;
  v1::PrefetchDatasetRequest request = h.Prefetch(60);
  Answer answer;
  h.StartPrefetch(request, kAlice, answer);
  REQUIRE(h.n1->prefetches.size() == 1);
  REQUIRE(h.n2->prefetches.size() == 1);
  const v1::DatasetPrefetch& sent = h.n1->prefetches[0];
  CHECK(sent.uid() == kAlice.uid);
  CHECK(sent.gid() == kAlice.gid);
  CHECK(sent.user() == "alice");
  CHECK(sent.dataset().path() == "/shared/imagenet");
  CHECK(sent.job_id() == 0);
  h.Reply(h.n1, sent.request_id(), true, /*hit=*/true);
  CHECK_FALSE(answer.has_value());  // n2 has not answered
  h.Reply(h.n2, h.n2->prefetches[0].request_id(), true);
  REQUIRE(answer.has_value());
  REQUIRE(answer->ok());
  const v1::DatasetCacheActionResponse& response = **answer;
  CHECK_FALSE(response.timed_out());
  CHECK(response.owner_uid() == kAlice.uid);
  REQUIRE(response.results_size() == 2);
  CHECK(response.results(0).node() == "n1");
  CHECK(response.results(0).hit());
  CHECK(response.results(1).node() == "n2");
  CHECK(response.results(1).bytes_copied() == 100);
  CHECK(response.results(1).version() == "v1");
}

TEST_CASE("without a wait, a prefetch is answered at once with what was sent",
          "[dataset_cache_controller]") {
  Harness h;
  Answer answer;
  h.StartPrefetch(h.Prefetch(0), kAlice, answer);
  REQUIRE(answer.has_value());
  REQUIRE(answer->ok());
  REQUIRE((*answer)->results_size() == 2);
  CHECK_FALSE((*answer)->results(0).done());
  CHECK((*answer)->results(0).request_id() != 0);
}

TEST_CASE("a wait that runs out answers with the nodes still open",
          "[dataset_cache_controller]") {
  Harness h;
  Answer answer;
  h.StartPrefetch(h.Prefetch(1), kAlice, answer);
  h.Reply(h.n1, h.n1->prefetches[0].request_id(), true);
  CHECK_FALSE(answer.has_value());
  // The wait is a timer on the loop: a second of real time.
  REQUIRE(h.PumpUntil([&] { return answer.has_value(); }));
  REQUIRE(answer->ok());
  CHECK((*answer)->timed_out());
  CHECK((*answer)->results(0).done());
  CHECK_FALSE((*answer)->results(1).done());
}

TEST_CASE("unknown nodes and root's prefetch send nothing",
          "[dataset_cache_controller]") {
  Harness h;
  v1::PrefetchDatasetRequest request = h.Prefetch(60);
  request.add_nodes("n9");
  Answer answer;
  h.StartPrefetch(request, kAlice, answer);
  REQUIRE(answer.has_value());
  CHECK(answer->status().code() == absl::StatusCode::kNotFound);
  CHECK(answer->status().message().find("n9") != std::string::npos);
  answer.reset();
  h.StartPrefetch(h.Prefetch(60), kRoot, answer);
  REQUIRE(answer.has_value());
  CHECK(answer->status().code() == absl::StatusCode::kPermissionDenied);
  CHECK(h.n1->prefetches.empty());
  CHECK(h.n2->prefetches.empty());
}

TEST_CASE("a node without its agent fails at once, one lost fails its request",
          "[dataset_cache_controller]") {
  Harness h;
  h.controller_->OnAgentGone(h.n2);
  h.Pump();
  Answer answer;
  h.StartPrefetch(h.Prefetch(60), kAlice, answer);
  CHECK(h.n2->prefetches.empty());
  CHECK_FALSE(answer.has_value());  // n1 is still copying
  h.controller_->OnAgentGone(h.n1);
  h.Pump();
  REQUIRE(answer.has_value());
  REQUIRE(answer->ok());
  for (const v1::DatasetNodeResult& result : (*answer)->results()) {
    INFO(result.node());
    CHECK(result.done());
    CHECK_FALSE(result.ok());
  }
  CHECK((*answer)->results(1).message().find("no connected agent") !=
        std::string::npos);
  CHECK((*answer)->results(0).message().find("lost its connection") !=
        std::string::npos);
}

TEST_CASE("an eviction goes where the reports hold the owner's dataset",
          "[dataset_cache_controller]") {
  Harness h;
  h.Report(h.n1, {Entry(kAlice.uid, "imagenet"), Entry(kBob.uid, "secret")});
  h.Report(h.n2, {Entry(kBob.uid, "imagenet")});
  v1::EvictDatasetRequest request;
  request.set_name("imagenet");
  request.set_wait_seconds(60);
  Answer answer;
  h.StartEvict(request, kAlice, answer);
  REQUIRE(h.n1->evictions.size() == 1);
  CHECK(h.n2->evictions.empty());  // bob's imagenet there is not alice's
  CHECK(h.n1->evictions[0].owner_uid() == kAlice.uid);
  h.Reply(h.n1, h.n1->evictions[0].request_id(), false);
  REQUIRE(answer.has_value());
  REQUIRE(answer->ok());
  CHECK((*answer)->results(0).message().find("job 7") != std::string::npos);

  // Another user's dataset: an admin's to evict, not alice's.
  request.set_name("secret");
  request.set_owner_uid(kBob.uid);
  answer.reset();
  h.StartEvict(request, kAlice, answer);
  REQUIRE(answer.has_value());
  CHECK(answer->status().code() == absl::StatusCode::kPermissionDenied);
  request.clear_owner_uid();
  answer.reset();
  h.StartEvict(request, kAlice, answer);
  CHECK(answer->status().code() == absl::StatusCode::kNotFound);
  request.set_owner_uid(kBob.uid);
  answer.reset();
  h.StartEvict(request, kRoot, answer);
  REQUIRE(h.n1->evictions.size() == 2);
  CHECK(h.n1->evictions[1].owner_uid() == kBob.uid);
  CHECK(h.n1->evictions[1].name() == "secret");
}

TEST_CASE("the listing and the status come from the reports",
          "[dataset_cache_controller]") {
  Harness h;
  h.Report(h.n1, {Entry(kAlice.uid, "imagenet"), Entry(kBob.uid, "secret")});
  absl::StatusOr<v1::ListDatasetCacheResponse> alices =
      h.controller_->FindFeature<DatasetsFeature>()->ListDatasetCache(
          v1::ListDatasetCacheRequest(), kAlice);
  REQUIRE(alices.ok());
  REQUIRE(alices->copies_size() == 1);
  CHECK(alices->copies(0).name() == "imagenet");
  CHECK(alices->nodes_size() == 2);
  CHECK(alices->now_ms() == h.clock_.NowMs());
  CHECK(h.controller_->FindFeature<DatasetsFeature>()
            ->ListDatasetCache(v1::ListDatasetCacheRequest(), kRoot)
            ->copies_size() == 2);
  const v1::DatasetCacheUse use =
      h.controller_->ClusterStatus().dataset_cache();
  CHECK(use.nodes_reporting() == 1);
  CHECK(use.copies() == 2);
  CHECK(use.capacity_bytes() == 1000);
}

TEST_CASE("stopping the controller answers a waiting call",
          "[dataset_cache_controller]") {
  Harness h;
  Answer answer;
  h.StartPrefetch(h.Prefetch(3600), kAlice, answer);
  CHECK_FALSE(answer.has_value());
  h.StopController();
  REQUIRE(answer.has_value());
  CHECK((*answer)->timed_out());
}

}  // namespace dataset_cache_controller_test
}  // namespace gantry
