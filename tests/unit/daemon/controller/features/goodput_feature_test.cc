// The goodput feature (daemon/controller/features/goodput/): its ledger
// and tracker, and the feature driven through its hooks over a fake
// context, as the controller drives it.
#include "daemon/controller/features/goodput/goodput_feature.h"

#include <catch2/catch.hpp>
#include <map>
#include <vector>

#include "daemon/controller/core/goodput.h"
#include "daemon/controller/features/goodput/goodput_ledger.h"
#include "tests/unit/daemon/controller/features/fake_feature_context.h"

namespace gantry {
namespace goodput_feature_test {

constexpr int64_t kBase = 1'700'000'400'000;  // a bucket start (600 s)
constexpr int64_t kSecond = 1000;

int64_t T(int64_t seconds) { return kBase + seconds * kSecond; }

TEST_CASE("the ledger sums the last day and forgets what is older") {
  const int64_t bucket = 600 * kSecond;
  GoodputLedger ledger(bucket, 3600 * kSecond);
  ledger.Add({{GoodputKind::kProductive, T(0), T(1800)},
              {GoodputKind::kLost, T(1800), T(1900)}},
             1);
  CHECK(ledger.Window(T(1900))[GoodputKind::kProductive] == 1800 * kSecond);
  CHECK(ledger.Window(T(1900))[GoodputKind::kLost] == 100 * kSecond);
  // An hour later the first 300 s of the window are gone: the bucket
  // across the window's start counts in proportion.
  const GoodputTotals later = ledger.Window(T(3900));
  CHECK(later[GoodputKind::kProductive] == 1500 * kSecond);
  ledger.Prune(T(6000));
  CHECK(ledger.Window(T(6000)).Total() == 0);
  CHECK(ledger.ToRecord().buckets_size() == 0);
  // Time older than what is kept is not counted again.
  ledger.Add({{GoodputKind::kQueued, T(0), T(2000)}}, 1);
  CHECK(ledger.Window(T(6000))[GoodputKind::kQueued] == 0);
}

TEST_CASE("the ledger is stored and restored") {
  GoodputLedger ledger;
  ledger.Add({{GoodputKind::kRecovering, T(0), T(700)}}, 1);
  const v1::GoodputLedgerRecord record = ledger.ToRecord();
  CHECK(record.buckets_size() == 2);
  GoodputLedger restored;
  REQUIRE(restored.Restore(record));
  CHECK(restored.Window(T(700)).ms == ledger.Window(T(700)).ms);
  GoodputLedger other_size(60 * kSecond);
  CHECK_FALSE(other_size.Restore(record));
}

TEST_CASE("a tracked job's new timeline replaces the old one in the ledger") {
  GoodputTracker tracker;
  // Running: productive so far.
  tracker.Update(7, {{GoodputKind::kStarting, T(0), T(10)},
                     {GoodputKind::kProductive, T(10), T(50)}});
  tracker.Update(7, {{GoodputKind::kStarting, T(0), T(10)},
                     {GoodputKind::kProductive, T(10), T(60)}});
  GoodputTotals now = tracker.ledger().Window(T(60));
  CHECK(now[GoodputKind::kProductive] == 50 * kSecond);
  // It failed: the time since its checkpoint at 30 was lost after all.
  tracker.Update(7, {{GoodputKind::kStarting, T(0), T(10)},
                     {GoodputKind::kProductive, T(10), T(30)},
                     {GoodputKind::kLost, T(30), T(58)},
                     {GoodputKind::kDetecting, T(58), T(61)}});
  now = tracker.ledger().Window(T(61));
  CHECK(now[GoodputKind::kProductive] == 20 * kSecond);
  CHECK(now[GoodputKind::kLost] == 28 * kSecond);
  CHECK(now[GoodputKind::kDetecting] == 3 * kSecond);
  CHECK(now.Total() == 61 * kSecond);
  // Shorter than before (a record rewound): the difference comes off.
  tracker.Update(7, {{GoodputKind::kStarting, T(0), T(5)}});
  CHECK(tracker.ledger().Window(T(61)).Total() == 5 * kSecond);
  CHECK(tracker.Remove(7).size() == 1);
  CHECK(tracker.ledger().Window(T(61)).Total() == 0);
  CHECK(tracker.size() == 0);
  CHECK(tracker.Remove(7).empty());
}

// A job that started at `start` and has made progress since, running.
v1::JobRecord RunningJob(uint64_t id, int64_t submit, int64_t start) {
  v1::JobRecord job;
  job.set_id(id);
  job.set_state(v1::RUNNING);
  job.set_submit_time_ms(T(submit));
  job.set_attempt(1);
  v1::AttemptRecord* attempt = job.add_attempts();
  attempt->set_attempt(1);
  attempt->set_start_time_ms(T(start));
  attempt->set_ranks_running_ms(T(start));
  attempt->set_first_progress_ms(T(start));
  return job;
}

v1::JobRecord Completed(v1::JobRecord job, int64_t end) {
  job.set_state(v1::COMPLETED);
  job.set_end_time_ms(T(end));
  job.mutable_attempts(0)->set_end_time_ms(T(end));
  job.mutable_attempts(0)->set_end_reason("Completed");
  return job;
}

TEST_CASE("the feature follows live jobs on ticks and fills the status") {
  FakeFeatureContext context(T(0));
  GoodputFeature feature(context);
  context.jobs[1] = RunningJob(1, 0, 10);
  context.live = {1};
  feature.OnStateLoaded(nullptr);
  context.fake_clock.SetMs(T(100));
  // Not yet refreshed: the tracker counted up to the load.
  CHECK(feature.LastDay()[GoodputKind::kProductive] == 0);
  for (uint64_t tick = 1; tick < GoodputFeature::kTicksPerRefresh; ++tick) {
    feature.OnTick(tick);
  }
  CHECK(feature.LastDay()[GoodputKind::kProductive] == 0);
  feature.OnTick(GoodputFeature::kTicksPerRefresh);
  CHECK(feature.LastDay()[GoodputKind::kQueued] == 10 * kSecond);
  CHECK(feature.LastDay()[GoodputKind::kProductive] == 90 * kSecond);
  v1::ClusterStatusResponse status;
  feature.FillStatus(status);
  CHECK(status.goodput_last_day().productive_ms() == 90 * kSecond);
  CHECK(status.ettr_last_day() == Approx(1.0));
  CHECK(status.goodput_window_seconds() == 86'400);
}

TEST_CASE("a retired job's time survives a restart through SaveRetired") {
  FakeFeatureContext context(T(0));
  v1::FairShareRecord stored;
  {
    GoodputFeature feature(context);
    feature.OnStateLoaded(nullptr);
    context.fake_clock.SetMs(T(60));
    const v1::JobRecord done = Completed(RunningJob(2, 0, 20), 60);
    feature.OnJobChanged(done);
    feature.OnJobFinished(done);
    feature.OnJobRetired(done);
    feature.SaveRetired(stored);
    CHECK(feature.LastDay()[GoodputKind::kProductive] == 40 * kSecond);
  }
  REQUIRE(stored.retired_goodput().buckets_size() > 0);
  // A new controller: the job is no longer in the live state, only in
  // what retired jobs left behind.
  GoodputFeature restarted(context);
  restarted.OnStateLoaded(&stored);
  CHECK(restarted.LastDay()[GoodputKind::kQueued] == 20 * kSecond);
  CHECK(restarted.LastDay()[GoodputKind::kProductive] == 40 * kSecond);
  // A day later it has left the window.
  context.fake_clock.SetMs(T(60 + 86'400 + 600));
  restarted.OnTick(GoodputFeature::kTicksPerRefresh);
  CHECK(restarted.LastDay().Total() == 0);
}

TEST_CASE("a stored ledger of another bucket size is set aside, not mixed") {
  FakeFeatureContext context(T(0));
  v1::FairShareRecord stored;
  GoodputLedger minutes(60 * kSecond);
  minutes.Add({{GoodputKind::kLost, T(0), T(120)}}, 1);
  *stored.mutable_retired_goodput() = minutes.ToRecord();
  GoodputFeature feature(context);
  context.fake_clock.SetMs(T(200));
  feature.OnStateLoaded(&stored);
  CHECK(feature.LastDay().Total() == 0);
}

}  // namespace goodput_feature_test
}  // namespace gantry
