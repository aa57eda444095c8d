// One job attempt's per-node progress
// (daemon/controller/features/stragglers/job_progress.h):
// agent summaries and single ranks' reports make one step time per node,
// and the stragglers among them.
#include "daemon/controller/features/stragglers/job_progress.h"

#include <catch2/catch.hpp>

namespace gantry {
namespace job_progress_test {

v1::NodeProgress Summary(int64_t step, double seconds, uint32_t slowest = 0,
                         uint32_t ranks = 1) {
  v1::NodeProgress progress;
  progress.set_step(step);
  progress.set_step_seconds(seconds);
  progress.set_slowest_rank(slowest);
  progress.set_ranks(ranks);
  return progress;
}

StragglerPolicy Policy() {
  StragglerPolicy policy;
  policy.slow_factor = 1.5;
  policy.min_duration_ms = 3'000;
  policy.min_peers = 2;
  policy.stale_ms = 5'000;
  return policy;
}

TEST_CASE("agent summaries: the slow node is found and confirmed",
          "[job_progress]") {
  JobProgress progress(1);
  for (int64_t t = 0; t <= 4'000; t += 1'000) {
    const int64_t step = t / 1'000 + 1;
    CHECK(progress.RecordNode("n1", Summary(step, 1.0), t) == (t > 0));
    progress.RecordNode("n2", Summary(step, 1.1), t);
    progress.RecordNode("n3", Summary(step, 0.9), t);
    progress.RecordNode("n4", Summary(step, 2.5, 13, 4), t);
    progress.Check(t, Policy(), 2'000);
  }
  REQUIRE(progress.findings().size() == 1);
  std::vector<StragglerFinding> stragglers = progress.Stragglers();
  REQUIRE(stragglers.size() == 1);
  CHECK(stragglers[0].node == "n4");
  CHECK(stragglers[0].slowdown == Approx(2.5));
  CHECK(progress.SlowestRank("n4") == 13);
  std::vector<v1::NodeProgress> nodes = progress.Nodes();
  REQUIRE(nodes.size() == 4);
  CHECK(nodes[3].node() == "n4");
  CHECK(nodes[3].step() == 5);
  CHECK(nodes[3].ranks() == 4);
  CHECK(nodes[3].effective_step_seconds() == Approx(2.5));
  CHECK(progress.FirstNotice("n4"));
  CHECK_FALSE(progress.FirstNotice("n4"));
}

TEST_CASE("ranks that report steps only: the pace of their steps",
          "[job_progress]") {
  JobProgress progress(2);
  // Ranks 0-2 on n1-n3 step every second; rank 3 on n4 every 3 s.
  for (int64_t t = 0; t <= 12'000; t += 1'000) {
    for (uint32_t rank = 0; rank < 3; ++rank) {
      progress.RecordRank("n" + std::to_string(rank + 1), rank, t / 1'000, 0,
                          t);
    }
    progress.RecordRank("n4", 3, t / 3'000, 0, t);
    progress.Check(t, Policy(), 500);
  }
  std::vector<StragglerFinding> stragglers = progress.Stragglers();
  REQUIRE(stragglers.size() == 1);
  CHECK(stragglers[0].node == "n4");
  CHECK(stragglers[0].step_seconds == Approx(3.0));
  CHECK(progress.SlowestRank("n4") == 3);
}

TEST_CASE("a node whose ranks stop advancing becomes a straggler",
          "[job_progress]") {
  JobProgress progress(1);
  for (int64_t t = 0; t <= 12'000; t += 1'000) {
    const int64_t step = t / 1'000;
    progress.RecordNode("n1", Summary(step, 1.0), t);
    progress.RecordNode("n2", Summary(step, 1.0), t);
    progress.RecordNode("n3", Summary(step, 1.0), t);
    // n4 stuck at step 3 from t=3 s, still heard from (its agent reports).
    progress.RecordNode("n4", Summary(std::min<int64_t>(step, 3), 1.0), t);
    progress.Check(t, Policy(), 1'000);
  }
  std::vector<StragglerFinding> stragglers = progress.Stragglers();
  REQUIRE(stragglers.size() == 1);
  CHECK(stragglers[0].node == "n4");
  CHECK(stragglers[0].step_seconds > 5.0);
}

TEST_CASE("a node's ranks and its agent: the slowest of them counts",
          "[job_progress]") {
  JobProgress progress(1);
  progress.RecordNode("n1", Summary(10, 0.5, 0, 2), 0);
  progress.RecordRank("n1", 1, 9, 0.8, 0);
  std::vector<v1::NodeProgress> nodes = progress.Nodes();
  REQUIRE(nodes.size() == 1);
  CHECK(nodes[0].step() == 9);
  CHECK(nodes[0].step_seconds() == Approx(0.8));
  CHECK(nodes[0].slowest_rank() == 1);
  CHECK(nodes[0].ranks() == 3);
}

}  // namespace job_progress_test
}  // namespace gantry
