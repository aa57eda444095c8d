// How far behind a standby is, as the replication metrics report it
// (daemon/replication/replication_metrics.h).
#include <catch2/catch.hpp>

#include "daemon/replication/replication_metrics.h"

namespace gantry::replication {
namespace replication_metrics_test {

TEST_CASE("Lag counts entries, and time since last caught up") {
  LagTracker tracker;
  LagTracker::Lag lag = tracker.Update(10, 10, 1000);
  CHECK(lag.entries == 0);
  CHECK(lag.seconds == 0);
  lag = tracker.Update(10, 15, 2000);
  CHECK(lag.entries == 5);
  CHECK(lag.seconds == Approx(1.0));
  lag = tracker.Update(12, 20, 4500);
  CHECK(lag.entries == 8);
  CHECK(lag.seconds == Approx(3.5));
  lag = tracker.Update(20, 20, 5000);
  CHECK(lag.entries == 0);
  CHECK(lag.seconds == 0);
}

TEST_CASE("A standby never caught up lags since its first sample") {
  LagTracker tracker;
  CHECK(tracker.Update(0, 100, 500).seconds == 0);
  CHECK(tracker.Update(3, 100, 2500).seconds == Approx(2.0));
}

TEST_CASE("Ahead of a stale leader figure is caught up") {
  // The leader's figure is republished every quarter TTL: a standby may
  // have applied past it.
  LagTracker tracker;
  CHECK(tracker.Update(30, 25, 100).entries == 0);
}

}  // namespace replication_metrics_test
}  // namespace gantry::replication
