// The straggler feature (daemon/controller/features/stragglers/) through
// its hooks over a fake context: what it records, shows and asks of the
// core. straggler_swap_test.cc runs it inside a whole controller.
#include "daemon/controller/features/stragglers/straggler_feature.h"

#include <catch2/catch.hpp>
#include <string>

#include "tests/unit/daemon/controller/features/fake_feature_context.h"

namespace gantry {
namespace straggler_feature_test {

constexpr uint64_t kJob = 7;

StragglerSettings Settings(StragglerResponse response) {
  StragglerSettings settings;
  settings.response = response;
  settings.policy.slow_factor = 1.5;
  settings.policy.min_duration_ms = 2'000;
  settings.policy.min_peers = 2;
  settings.policy.stale_ms = 5'000;
  return settings;
}

// Job 7, attempt 1, running on n1-n4 with one rank each (rank i on n(i+1)).
void AddRunningJob(FakeFeatureContext& context) {
  v1::JobRecord job;
  job.set_id(kJob);
  job.set_state(v1::RUNNING);
  job.set_attempt(1);
  for (uint32_t rank = 0; rank < 4; ++rank) {
    v1::NodeAllocation& share = *job.add_allocation();
    share.set_node("n" + std::to_string(rank + 1));
    share.set_first_rank(rank);
    share.set_rank_count(1);
  }
  context.jobs[kJob] = job;
  context.live.insert(kJob);
}

v1::ReportProgressRequest RankReport(uint32_t rank, int64_t step,
                                     double seconds) {
  v1::ReportProgressRequest report;
  report.set_job_id(kJob);
  report.set_rank(rank);
  report.set_step(step);
  report.set_step_seconds(seconds);
  return report;
}

// Every rank reports each step; rank 1 (on n2) takes 3 s a step, the
// others 1 s; a second passes and the feature's tick runs after each.
void Steps(StragglerFeature& feature, FakeFeatureContext& context, int64_t from,
           int64_t to) {
  const v1::JobRecord& job = context.jobs.at(kJob);
  for (int64_t step = from; step <= to; ++step) {
    for (uint32_t rank = 0; rank < 4; ++rank) {
      REQUIRE(
          feature
              .OnProgressReport(job, RankReport(rank, step, rank == 1 ? 3 : 1))
              .ok());
    }
    context.fake_clock.AdvanceMs(StragglerFeature::kCheckEveryMs);
    feature.OnTick(static_cast<uint64_t>(step));
  }
}

v1::JobStragglers Shown(const StragglerFeature& feature,
                        const FakeFeatureContext& context) {
  v1::GetJobResponse reply;
  feature.FillJob(context.jobs.at(kJob), reply);
  return reply.progress();
}

TEST_CASE("a slow node is found once and swapped at the next checkpoint") {
  FakeFeatureContext context(1'000'000);
  AddRunningJob(context);
  StragglerFeature feature(context, Settings(StragglerResponse::kSwap));
  Steps(feature, context, 1, 6);

  const v1::JobStragglers shown = Shown(feature, context);
  REQUIRE(shown.stragglers_size() == 1);
  CHECK(shown.stragglers(0).node() == "n2");
  CHECK(shown.stragglers(0).rank() == 1);
  CHECK(shown.stragglers(0).action() == "swap at the next checkpoint");
  CHECK(shown.nodes_size() == 4);
  v1::ClusterStatusResponse status;
  feature.FillStatus(status);
  CHECK(status.straggler_jobs_size() == 1);
  // Found once, however many checks see it.
  REQUIRE(context.events.size() == 1);
  CHECK(context.events[0].kind == "straggler");
  CHECK(context.events[0].node == "n2");
  CHECK(context.restarts.empty());

  context.jobs[kJob].mutable_latest_checkpoint()->set_path("/ckpt/6");
  feature.OnCheckpoint(context.jobs.at(kJob));
  CHECK(context.drained == std::vector<std::string>{"n2"});
  REQUIRE(context.restarts.size() == 1);
  CHECK(context.restarts[0].end_reason == "Straggler");
  CHECK(context.restarts[0].detail ==
        "straggler swap at checkpoint /ckpt/6: n2 (3.0x slower)");
  CHECK(context.events.back().kind == "straggler_swap");
  // The attempt's progress is gone with it.
  CHECK(Shown(feature, context).stragglers_size() == 0);
}

TEST_CASE("a straggler the job cannot restart without is only reported") {
  FakeFeatureContext context(1'000'000);
  AddRunningJob(context);
  context.unreplaceable = {"n2"};
  StragglerFeature feature(context, Settings(StragglerResponse::kSwap));
  Steps(feature, context, 1, 6);

  const v1::JobStragglers shown = Shown(feature, context);
  REQUIRE(shown.stragglers_size() == 1);
  CHECK(shown.stragglers(0).action().rfind(
            "report (the job could not restart without it now", 0) == 0);
  feature.OnCheckpoint(context.jobs.at(kJob));
  CHECK(context.drained.empty());
  CHECK(context.restarts.empty());
}

TEST_CASE("report finds stragglers and never acts on them") {
  FakeFeatureContext context(1'000'000);
  AddRunningJob(context);
  StragglerFeature feature(context, Settings(StragglerResponse::kReport));
  Steps(feature, context, 1, 6);
  REQUIRE(Shown(feature, context).stragglers_size() == 1);
  CHECK(Shown(feature, context).stragglers(0).action() == "report");
  feature.OnCheckpoint(context.jobs.at(kJob));
  CHECK(context.drained.empty());
  CHECK(context.restarts.empty());
}

TEST_CASE("a rank the job does not have is refused, naming its ranks") {
  FakeFeatureContext context(1'000'000);
  AddRunningJob(context);
  StragglerFeature feature(context, Settings(StragglerResponse::kReport));
  const absl::Status refused =
      feature.OnProgressReport(context.jobs.at(kJob), RankReport(9, 1, 1));
  CHECK(refused.code() == absl::StatusCode::kInvalidArgument);
  CHECK(refused.message() == "job 7 has no rank 9 (ranks 0-3)");
  // Without a rank, or with the feature off, a report is plain progress.
  v1::ReportProgressRequest plain = RankReport(0, 1, 1);
  plain.clear_rank();
  CHECK(feature.OnProgressReport(context.jobs.at(kJob), plain).ok());
  StragglerFeature off(context, Settings(StragglerResponse::kOff));
  CHECK(off.OnProgressReport(context.jobs.at(kJob), RankReport(9, 1, 1)).ok());
}

TEST_CASE("heartbeats count only for the job's nodes and current attempt") {
  FakeFeatureContext context(1'000'000);
  AddRunningJob(context);
  StragglerFeature feature(context, Settings(StragglerResponse::kReport));
  auto beat = [](uint32_t attempt, int64_t step) {
    v1::Heartbeat heartbeat;
    v1::RankProgressReport& report = *heartbeat.add_rank_progress();
    report.set_job_id(kJob);
    report.set_attempt(attempt);
    report.mutable_progress()->set_step(step);
    return heartbeat;
  };
  // A first step says nothing of the pace; the next one is progress.
  feature.OnHeartbeat("n1", beat(1, 3));
  CHECK(context.progressed.empty());
  feature.OnHeartbeat("n1", beat(1, 4));
  CHECK(context.progressed == std::vector<uint64_t>{kJob});
  // Not the job's node, not its attempt: ignored.
  feature.OnHeartbeat("n9", beat(1, 3));
  feature.OnHeartbeat("n9", beat(1, 5));
  feature.OnHeartbeat("n2", beat(2, 3));
  feature.OnHeartbeat("n2", beat(2, 5));
  CHECK(context.progressed.size() == 1);
  // Off: not even looked at.
  StragglerFeature off(context, Settings(StragglerResponse::kOff));
  off.OnHeartbeat("n3", beat(1, 3));
  off.OnHeartbeat("n3", beat(1, 4));
  CHECK(context.progressed.size() == 1);
}

}  // namespace straggler_feature_test
}  // namespace gantry
