// The checkpoint interval that maximizes goodput (Young/Daly), and the
// failure rate it is computed from.

#include "daemon/scheduler/checkpoint_interval.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

namespace gantry {
namespace checkpoint_interval_test {

// Daly's exponential model of a job's expected wall time per second of
// training, checkpointing every `interval` seconds at `cost` each, with
// failures at mean `mtbf` (restart time left out: it does not depend on
// the interval).
double WallPerTrainingSecond(double interval, double cost, double mtbf) {
  return mtbf * (std::exp((interval + cost) / mtbf) - 1) / interval;
}

TEST_CASE("The interval is the model's optimum, found by a grid search",
          "[checkpoint_interval]") {
  for (const auto& [cost, mtbf] :
       {std::pair{10.0, 11'130.0}, std::pair{1.0, 11'130.0},
        std::pair{120.0, 3'600.0}, std::pair{60.0, 86'400.0 * 30}}) {
    const std::optional<double> interval =
        OptimalCheckpointIntervalSeconds(cost, mtbf);
    REQUIRE(interval.has_value());
    double best = 0, least = std::numeric_limits<double>::infinity();
    for (double candidate = 1; candidate < 10 * mtbf; candidate *= 1.001) {
      const double wall = WallPerTrainingSecond(candidate, cost, mtbf);
      if (wall < least) least = wall, best = candidate;
    }
    INFO("cost " << cost << " mtbf " << mtbf << " grid optimum " << best);
    CHECK(*interval == Approx(best).epsilon(0.02));
    // And what it costs there is the least, to within a part in 10^4.
    CHECK(WallPerTrainingSecond(*interval, cost, mtbf) ==
          Approx(least).epsilon(1e-4));
  }
}

TEST_CASE("Young's figure for a 16k-GPU job at Llama 3's failure rate",
          "[checkpoint_interval]") {
  // 419 interruptions in 54 days on 16,384 GPUs (2,048 nodes): a joint
  // MTBF of 3.09 h. A 10 s checkpoint: every 7.75 minutes, not every 30.
  const double mtbf = 54.0 * 86'400 / 419;
  CHECK(*OptimalCheckpointIntervalSeconds(10, mtbf) ==
        Approx(std::sqrt(2 * 10 * mtbf)).epsilon(0.03));
  CHECK(*OptimalCheckpointIntervalSeconds(10, mtbf) == Approx(465).margin(2));
}

TEST_CASE("A checkpoint dearer than twice the MTBF: once per MTBF",
          "[checkpoint_interval]") {
  CHECK(OptimalCheckpointIntervalSeconds(7'200, 3'600) == 3'600);
}

TEST_CASE("No interval from a cost or MTBF that is not positive and finite",
          "[checkpoint_interval]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (const auto& [cost, mtbf] :
       {std::pair{0.0, 100.0}, std::pair{-1.0, 100.0}, std::pair{10.0, 0.0},
        std::pair{nan, 100.0}, std::pair{10.0, inf}}) {
    CHECK_FALSE(OptimalCheckpointIntervalSeconds(cost, mtbf).has_value());
  }
}

TEST_CASE("The failure rate: the prior until evidence outweighs it",
          "[checkpoint_interval]") {
  FailureRateEstimate estimate{.prior_mtbf_hours = 5'000,
                               .prior_node_hours = 50'000};
  CHECK(*estimate.NodeMtbfHours() == Approx(5'000));
  // A cluster failing twice as often, seen for far longer than the prior
  // is worth.
  estimate.observed_node_hours = 5'000'000;
  estimate.observed_failures = 2'000;
  CHECK(*estimate.NodeMtbfHours() == Approx(2'500).epsilon(0.02));
}

TEST_CASE("No prior and no failure: at least as long as observed",
          "[checkpoint_interval]") {
  FailureRateEstimate none;
  CHECK_FALSE(none.NodeMtbfHours().has_value());
  none.observed_node_hours = 800;
  CHECK(*none.NodeMtbfHours() == 800);
  none.observed_failures = 4;
  CHECK(*none.NodeMtbfHours() == 200);
}

}  // namespace checkpoint_interval_test
}  // namespace gantry
