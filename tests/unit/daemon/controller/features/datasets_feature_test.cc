// The datasets feature (daemon/controller/features/datasets/) through its
// hooks over a fake context: a node's staging progress goes into its
// running job's record (Staging until every node has every dataset),
// stale or foreign reports change nothing, a prefetch is sent only to a
// connected node, a lost agent fails its open requests and answers the
// call waiting on them, and the caches' use reaches `gantry status`. With
// the real controller: dataset_progress_test, dataset_cache_controller_test
// and stage_ahead_component_test; with real agents,
// integration.dataset_cache*.
#include "daemon/controller/features/datasets/datasets_feature.h"

#include <catch2/catch.hpp>
#include <optional>
#include <string>

#include "daemon/controller/core/staging_reason.h"
#include "tests/unit/daemon/controller/features/fake_feature_context.h"

namespace gantry {
namespace datasets_feature_test {

constexpr uint64_t kJob = 5;
const Caller kAlice{.uid = 1000, .gid = 1000, .user = "alice"};

// Job 5 runs attempt 2 on n1 and n2 with one dataset; n3 is idle.
struct Cluster {
  Cluster() : context(1'000'000), feature(context, StageAheadOptions()) {
    for (const char* name : {"n1", "n2", "n3"}) {
      context.nodes[name].set_name(name);
    }
    v1::JobRecord& job = context.jobs[kJob];
    job.set_id(kJob);
    job.set_state(v1::RUNNING);
    job.set_attempt(2);
    job.set_reason("None");
    job.add_allocation()->set_node("n1");
    job.add_allocation()->set_node("n2");
    v1::DatasetRef& dataset = *job.mutable_spec()->add_datasets();
    dataset.set_name("train");
    dataset.set_path("/shared/train");
    ShowStaging(job, true);
  }
  v1::JobRecord& job() { return context.jobs[kJob]; }
  void Progress(const std::string& node, uint32_t attempt, bool done) {
    v1::AgentMessage message;
    v1::DatasetProgress& progress = *message.mutable_dataset_progress();
    progress.set_job_id(kJob);
    progress.set_attempt(attempt);
    progress.set_dataset("train");
    progress.set_bytes_done(done ? 100 : 40);
    progress.set_bytes_total(100);
    progress.set_done(done);
    feature.OnAgentMessage(node, message);
  }
  v1::PrefetchDatasetRequest Prefetch(const std::string& node) {
    v1::PrefetchDatasetRequest request;
    request.mutable_dataset()->set_name("train");
    request.mutable_dataset()->set_path("/shared/train");
    request.add_nodes(node);
    request.set_wait_seconds(60);
    return request;
  }

  FakeFeatureContext context;
  DatasetsFeature feature;
};

TEST_CASE("staging shows until every node reported every dataset") {
  Cluster c;
  c.Progress("n1", 2, false);
  REQUIRE(c.job().dataset_staging_size() == 1);
  CHECK(c.job().dataset_staging(0).bytes_done() == 40);
  CHECK(c.job().reason() == kStagingReason);
  c.Progress("n1", 2, true);
  CHECK(c.job().dataset_staging_size() == 1);  // the same entry, updated
  CHECK(c.job().reason() == kStagingReason);   // n2 has not reported
  c.Progress("n2", 2, true);
  CHECK(c.job().dataset_staging_size() == 2);
  CHECK(c.job().reason() == "None");
}

TEST_CASE("a stale or foreign staging report changes nothing") {
  Cluster c;
  c.Progress("n1", 1, true);  // an earlier attempt
  c.Progress("n3", 2, true);  // not a node of the job
  CHECK(c.job().dataset_staging_size() == 0);
  CHECK(c.job().reason() == kStagingReason);
}

TEST_CASE("a prefetch goes only to connected nodes, as the caller") {
  Cluster c;
  c.context.disconnected.insert("n2");
  std::optional<absl::StatusOr<v1::DatasetCacheActionResponse>> answer;
  v1::PrefetchDatasetRequest request = c.Prefetch("n1");
  request.add_nodes("n2");
  request.set_wait_seconds(0);
  c.feature.PrefetchDataset(request, kAlice,
                            [&](auto result) { answer = std::move(result); });
  REQUIRE(c.context.sent.size() == 1);
  CHECK(c.context.sent[0].first == "n1");
  const v1::DatasetPrefetch& sent = c.context.sent[0].second.dataset_prefetch();
  CHECK(sent.uid() == kAlice.uid);
  CHECK(sent.user() == "alice");
  CHECK(sent.job_id() == 0);
  REQUIRE(answer.has_value());
  REQUIRE(answer->ok());
  REQUIRE((*answer)->results_size() == 2);
  CHECK((*answer)->results(1).node() == "n2");
  CHECK_FALSE((*answer)->results(1).ok());
  CHECK((*answer)->results(1).message().find("no connected agent") !=
        std::string::npos);
}

TEST_CASE("a lost agent fails its open requests and answers their call") {
  Cluster c;
  std::optional<absl::StatusOr<v1::DatasetCacheActionResponse>> answer;
  c.feature.PrefetchDataset(c.Prefetch("n1"), kAlice,
                            [&](auto result) { answer = std::move(result); });
  REQUIRE(c.context.sent.size() == 1);
  CHECK_FALSE(answer.has_value());  // waits for n1's answer
  c.feature.OnNodeDisconnected("n1");
  REQUIRE(answer.has_value());
  REQUIRE(answer->ok());
  REQUIRE((*answer)->results_size() == 1);
  CHECK_FALSE((*answer)->results(0).ok());
  CHECK_FALSE((*answer)->timed_out());
}

TEST_CASE("an unknown node refuses the whole prefetch, and nothing is sent") {
  Cluster c;
  std::optional<absl::StatusOr<v1::DatasetCacheActionResponse>> answer;
  c.feature.PrefetchDataset(c.Prefetch("n9"), kAlice,
                            [&](auto result) { answer = std::move(result); });
  REQUIRE(answer.has_value());
  CHECK(answer->status().code() == absl::StatusCode::kNotFound);
  CHECK(c.context.sent.empty());
}

TEST_CASE("the caches' use reaches gantry status") {
  Cluster c;
  c.context.dataset_caches["n1"].set_capacity_bytes(1000);
  c.context.dataset_caches["n1"].set_used_bytes(250);
  c.context.dataset_caches["n2"].set_capacity_bytes(1000);
  v1::ClusterStatusResponse status;
  c.feature.FillStatus(status);
  CHECK(status.dataset_cache().capacity_bytes() == 2000);
  CHECK(status.dataset_cache().used_bytes() == 250);
}

}  // namespace datasets_feature_test
}  // namespace gantry
