#include "daemon/controller/core/utilization_history.h"

#include <catch2/catch.hpp>

namespace gantry {
namespace utilization_history_test {

constexpr int64_t kMinute = 60'000;
// A time on a minute boundary, so bucket starts are easy to state.
constexpr int64_t kT0 = 1'700'000'040'000;

TEST_CASE("an empty history has no series and a mean of 0") {
  UtilizationHistory history;
  CHECK(history.Series(kT0).empty());
  CHECK(history.Mean(kT0) == 0.0);
}

TEST_CASE("samples in one bucket average, weighted by GPU count") {
  UtilizationHistory history(kMinute, 60);
  history.Record(kT0 + 1'000, 8, 8);   // 100%
  history.Record(kT0 + 6'000, 8, 0);   // 0%
  history.Record(kT0 + 11'000, 0, 0);  // no GPUs: weighs nothing
  const auto series = history.Series(kT0 + 12'000);
  REQUIRE(series.size() == 1);
  CHECK(series[0].start_ms == kT0);
  CHECK(series[0].allocated_share == Approx(0.5));
  CHECK(history.Mean(kT0 + 12'000) == Approx(0.5));
}

TEST_CASE("buckets are aligned to their length and gaps are left out") {
  UtilizationHistory history(kMinute, 60);
  history.Record(kT0 + 30'000, 4, 1);
  history.Record(kT0 + kMinute + 5'000, 4, 2);
  // Nothing in the third minute (the controller was stalled).
  history.Record(kT0 + 3 * kMinute + 1, 4, 4);
  const auto series = history.Series(kT0 + 3 * kMinute + 2);
  REQUIRE(series.size() == 3);
  CHECK(series[0].start_ms == kT0);
  CHECK(series[1].start_ms == kT0 + kMinute);
  CHECK(series[2].start_ms == kT0 + 3 * kMinute);
  CHECK(series[0].allocated_share == Approx(0.25));
  CHECK(series[2].allocated_share == Approx(1.0));
  CHECK(history.Mean(kT0 + 3 * kMinute + 2) == Approx(7.0 / 12.0));
}

TEST_CASE("the ring keeps only the last hour") {
  UtilizationHistory history(kMinute, 60);
  for (int minute = 0; minute < 90; ++minute) {
    // The first 30 minutes busy, then idle.
    history.Record(kT0 + minute * kMinute, 10, minute < 30 ? 10 : 0);
  }
  const int64_t now = kT0 + 89 * kMinute + 1'000;
  const auto series = history.Series(now);
  REQUIRE(series.size() == 60);
  CHECK(series.front().start_ms == kT0 + 30 * kMinute);
  CHECK(series.back().start_ms == kT0 + 89 * kMinute);
  CHECK(history.Mean(now) == 0.0);
}

TEST_CASE(
    "buckets older than the window drop out of the series even with no "
    "new sample") {
  UtilizationHistory history(kMinute, 60);
  history.Record(kT0, 2, 1);
  CHECK(history.Series(kT0 + 59 * kMinute).size() == 1);
  CHECK(history.Series(kT0 + 60 * kMinute).empty());
  CHECK(history.Mean(kT0 + 60 * kMinute) == 0.0);
}

TEST_CASE(
    "allocated above total is clamped, and a clock going back stays in "
    "the current bucket") {
  UtilizationHistory history(kMinute, 60);
  history.Record(kT0 + 10'000, 2, 5);
  history.Record(kT0 + 5'000, 2, 0);
  const auto series = history.Series(kT0 + 20'000);
  REQUIRE(series.size() == 1);
  CHECK(series[0].allocated_share == Approx(0.5));
}

}  // namespace utilization_history_test
}  // namespace gantry
