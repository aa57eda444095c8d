// Goodput accounting: a job's wall time split into segments from its
// attempt times (daemon/controller/goodput.h), as table tests. The
// sliding-day ledger that sums jobs is the goodput feature's
// (features/goodput_feature_test.cc).
#include "daemon/controller/core/goodput.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace gantry {
namespace goodput_test {

constexpr int64_t kBase = 1'700'000'400'000;  // a bucket start (600 s)
constexpr int64_t kSecond = 1000;

int64_t T(int64_t seconds) { return kBase + seconds * kSecond; }

// One attempt, in seconds after kBase (0: not set).
struct Attempt {
  int64_t start = 0, preflight_start = 0, preflight_end = 0, ranks_running = 0,
          first_progress = 0, last_checkpoint = 0, fault = 0, end = 0;
  std::string end_reason = "";
};

v1::JobRecord Job(v1::JobState state, int64_t submit, int64_t end,
                  const std::vector<Attempt>& attempts,
                  bool checkpoint_dir = true) {
  v1::JobRecord job;
  job.set_id(1);
  job.set_state(state);
  job.set_submit_time_ms(T(submit));
  if (end > 0) job.set_end_time_ms(T(end));
  if (checkpoint_dir) job.mutable_spec()->set_checkpoint_dir("/ckpt");
  uint32_t number = 1;
  for (const Attempt& a : attempts) {
    v1::AttemptRecord* out = job.add_attempts();
    out->set_attempt(number++);
    auto at = [](int64_t seconds) { return seconds > 0 ? T(seconds) : 0; };
    out->set_start_time_ms(at(a.start));
    out->set_preflight_start_ms(at(a.preflight_start));
    out->set_preflight_end_ms(at(a.preflight_end));
    out->set_ranks_running_ms(at(a.ranks_running));
    out->set_first_progress_ms(at(a.first_progress));
    out->set_last_checkpoint_ms(at(a.last_checkpoint));
    out->set_fault_time_ms(at(a.fault));
    out->set_end_time_ms(at(a.end));
    out->set_end_reason(a.end_reason);
  }
  return job;
}

// Seconds per segment, in the order of the enum.
struct Split {
  int64_t queued, preflight, starting, productive, lost, detecting, recovering;
};

Split Seconds(const GoodputTotals& totals) {
  auto s = [&](GoodputKind segment) { return totals[segment] / kSecond; };
  return {s(GoodputKind::kQueued),    s(GoodputKind::kPreflight),
          s(GoodputKind::kStarting),  s(GoodputKind::kProductive),
          s(GoodputKind::kLost),      s(GoodputKind::kDetecting),
          s(GoodputKind::kRecovering)};
}

void CheckSplit(const Split& got, const Split& want) {
  CHECK(got.queued == want.queued);
  CHECK(got.preflight == want.preflight);
  CHECK(got.starting == want.starting);
  CHECK(got.productive == want.productive);
  CHECK(got.lost == want.lost);
  CHECK(got.detecting == want.detecting);
  CHECK(got.recovering == want.recovering);
}

struct Case {
  const char* name;
  v1::JobRecord job;
  int64_t now;  // seconds after kBase
  Split want;
};

TEST_CASE("a job's wall time is split into segments that add up to it") {
  const std::vector<Case> cases = {
      {"pending: all queued",
       Job(v1::PENDING, 0, 0, {}),
       30,
       {30, 0, 0, 0, 0, 0, 0}},
      {"cancelled while pending: queued to its end",
       Job(v1::CANCELLED, 0, 20, {}),
       99,
       {20, 0, 0, 0, 0, 0, 0}},
      {"completed: queued, starting to first progress, then productive",
       Job(v1::COMPLETED, 0, 100,
           {{.start = 10,
             .ranks_running = 12,
             .first_progress = 20,
             .end = 100,
             .end_reason = "Completed"}}),
       200,
       {10, 0, 10, 80, 0, 0, 0}},
      {"running: productive up to now, not yet lost",
       Job(v1::RUNNING, 0, 0,
           {{.start = 10,
             .ranks_running = 11,
             .first_progress = 20,
             .last_checkpoint = 30}}),
       50,
       {10, 0, 10, 30, 0, 0, 0}},
      {"running without progress yet: starting",
       Job(v1::RUNNING, 0, 0, {{.start = 5, .ranks_running = 6}}),
       25,
       {5, 0, 20, 0, 0, 0, 0}},
      {"a node fault: lost since the checkpoint, detecting, recovering",
       Job(v1::COMPLETED, 0, 200,
           {{.start = 10,
             .ranks_running = 12,
             .first_progress = 20,
             .last_checkpoint = 50,
             .fault = 60,
             .end = 63,
             .end_reason = "NodeFail"},
            {.start = 64,
             .ranks_running = 66,
             .first_progress = 70,
             .end = 200,
             .end_reason = "Completed"}}),
       300,
       // starting 10 (10..20) + 4 (66..70); recovering 63..66
       {10, 0, 14, 160, 10, 3, 3}},
      {"a failure before any checkpoint loses all the attempt's progress",
       Job(v1::RUNNING, 0, 0,
           {{.start = 1,
             .first_progress = 10,
             .fault = 40,
             .end = 42,
             .end_reason = "NonZeroExitCode"},
            {.start = 45, .ranks_running = 46}}),
       50,
       {1, 0, 13, 0, 30, 2, 4}},
      {"pending after a failure: recovering",
       Job(v1::PENDING, 0, 0,
           {{.start = 2,
             .first_progress = 4,
             .last_checkpoint = 8,
             .fault = 9,
             .end = 10,
             .end_reason = "Hang"}}),
       25,
       {2, 0, 2, 4, 1, 1, 15}},
      {"a requeue that is not a failure waits as queued",
       Job(v1::RUNNING, 0, 0,
           {{.start = 10,
             .first_progress = 11,
             .end = 20,
             .end_reason = "Requeued"},
            {.start = 30, .ranks_running = 31, .first_progress = 32}}),
       40,
       {20, 0, 3, 17, 0, 0, 0}},
      {"pre-flight is carved out of starting and recovering",
       Job(v1::COMPLETED, 0, 100,
           {{.start = 10,
             .preflight_start = 10,
             .preflight_end = 14,
             .ranks_running = 15,
             .first_progress = 20,
             .last_checkpoint = 30,
             .fault = 40,
             .end = 41,
             .end_reason = "NodeFail"},
            {.start = 45,
             .preflight_start = 46,
             .preflight_end = 50,
             .ranks_running = 52,
             .first_progress = 55,
             .end = 100,
             .end_reason = "Completed"}}),
       100,
       // recovering 41..46 and 50..52; starting 14..20 and 52..55
       {10, 8, 9, 55, 10, 1, 7}},
      {"a job that never reports progress is productive once running",
       Job(v1::COMPLETED, 0, 60,
           {{.start = 5,
             .ranks_running = 6,
             .end = 60,
             .end_reason = "Completed"}},
           /*checkpoint_dir=*/false),
       60,
       {5, 0, 1, 54, 0, 0, 0}},
      {"...and its failed attempt is lost",
       Job(v1::FAILED, 0, 60,
           {{.start = 5,
             .ranks_running = 6,
             .fault = 60,
             .end = 60,
             .end_reason = "NonZeroExitCode"}},
           /*checkpoint_dir=*/false),
       60,
       {5, 0, 1, 0, 54, 0, 0}},
      {"...but an attempt that died staging (its ranks never ran) lost no "
       "work: it was starting",
       Job(v1::FAILED, 0, 31,
           {{.start = 5, .fault = 30, .end = 31, .end_reason = "NodeFail"}},
           /*checkpoint_dir=*/false),
       31,
       {5, 0, 25, 0, 0, 1, 0}},
      {"a checkpoint reported after the fault: no lost time, detecting "
       "shortened",
       Job(v1::RUNNING, 0, 0,
           {{.start = 1,
             .first_progress = 2,
             .last_checkpoint = 12,
             .fault = 10,
             .end = 13,
             .end_reason = "NodeFail"}}),
       13,
       {1, 0, 1, 10, 0, 1, 0}},
      {"records from before fault times: the reason says it failed",
       Job(v1::NODE_FAIL, 0, 30,
           {{.start = 1,
             .first_progress = 5,
             .last_checkpoint = 10,
             .end = 30,
             .end_reason = "NodeFail"}}),
       30,
       {1, 0, 4, 5, 20, 0, 0}},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      const std::vector<GoodputInterval> timeline =
          GoodputTimeline(c.job, T(c.now));
      const GoodputTotals totals = SumTimeline(timeline);
      CheckSplit(Seconds(totals), c.want);
      const int64_t end =
          c.job.end_time_ms() > 0 ? c.job.end_time_ms() : T(c.now);
      CHECK(totals.Total() == end - c.job.submit_time_ms());
      // Adjacent, in order, no empty interval.
      for (size_t i = 0; i < timeline.size(); ++i) {
        CHECK(timeline[i].begin_ms < timeline[i].end_ms);
        if (i > 0) CHECK(timeline[i].begin_ms == timeline[i - 1].end_ms);
      }
    }
  }
}

TEST_CASE("the effective training time ratio leaves queued time out") {
  GoodputTotals totals;
  CHECK(totals.Ettr() == 0.0);
  totals[GoodputKind::kQueued] = 1000;
  CHECK(totals.Ettr() == 0.0);
  totals[GoodputKind::kProductive] = 900;
  totals[GoodputKind::kLost] = 50;
  totals[GoodputKind::kRecovering] = 50;
  CHECK(totals.Ettr() == Approx(0.9));
  const GoodputTotals back = FromProto(ToProto(totals));
  CHECK(back.ms == totals.ms);
}

TEST_CASE("a timeline is summed over a window") {
  const std::vector<GoodputInterval> timeline = {
      {GoodputKind::kQueued, T(0), T(10)},
      {GoodputKind::kProductive, T(10), T(30)}};
  const GoodputTotals totals = SumTimeline(timeline, T(5), T(20));
  CHECK(totals[GoodputKind::kQueued] == 5 * kSecond);
  CHECK(totals[GoodputKind::kProductive] == 10 * kSecond);
}

}  // namespace goodput_test
}  // namespace gantry
