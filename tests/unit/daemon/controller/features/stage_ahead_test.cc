// Staging ahead (daemon/controller/features/datasets/stage_ahead.h): which of a
// waiting job's (node, dataset) prefetches gantryd sends now, with a fake
// clock: each once, only inside the window, new nodes when the reservation
// moves, failed ones again after a back-off that doubles, a pin renewed when
// the start moves out, and the per-node and per-pass limits.
#include "daemon/controller/features/datasets/stage_ahead.h"

#include <catch2/catch.hpp>

namespace gantry {
namespace stage_ahead_test {

constexpr int64_t kMinute = 60'000;
constexpr int64_t kHour = 60 * kMinute;

StageAheadTarget Target(uint64_t job, int64_t start_ms,
                        std::vector<std::string> nodes,
                        std::vector<std::string> datasets = {"train"}) {
  StageAheadTarget target;
  target.job_id = job;
  target.start_ms = start_ms;
  target.nodes = std::move(nodes);
  target.datasets = std::move(datasets);
  return target;
}

// The planner and a record of requests standing in for the controller:
// Send records each planned prefetch as the controller would.
struct Harness {
  explicit Harness(StageAheadOptions options = {}) : planner(options) {}

  std::vector<StageAheadSend> PlanAndSend(int64_t now) {
    std::vector<StageAheadSend> sends = planner.Plan(requests, now);
    for (const StageAheadSend& send : sends) {
      DatasetRequest request;
      request.node = send.node;
      request.dataset = send.dataset;
      request.job_id = send.job_id;
      request.sent_ms = now;
      const uint64_t id = requests.Add(request);
      planner.Sent(send, id, now);
      ids.push_back(id);
    }
    return sends;
  }
  // The agent answers the request with that id.
  void Answer(uint64_t id, bool ok, int64_t now) {
    v1::DatasetCacheResult result;
    result.set_request_id(id);
    result.set_ok(ok);
    REQUIRE(requests.Finish(requests.Find(id)->node, result, now));
  }
  void AnswerAll(bool ok, int64_t now) {
    for (uint64_t id : ids) {
      if (!requests.Find(id)->done) Answer(id, ok, now);
    }
  }

  StageAheadPlanner planner;
  DatasetRequests requests;
  std::vector<uint64_t> ids;
};

std::vector<std::pair<std::string, std::string>> Pairs(
    const std::vector<StageAheadSend>& sends) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const StageAheadSend& send : sends) {
    out.emplace_back(send.node, send.dataset);
  }
  return out;
}

TEST_CASE("each node gets each dataset once, with a hold past the start",
          "[stage_ahead]") {
  Harness h;
  const int64_t now = 1000 * kHour;
  h.planner.SetTargets(
      {Target(7, now + 10 * kMinute, {"n1", "n2"}, {"train", "labels"})});
  std::vector<StageAheadSend> sends = h.PlanAndSend(now);
  using P = std::pair<std::string, std::string>;
  CHECK(Pairs(sends) == std::vector<P>{{"n1", "train"},
                                       {"n1", "labels"},
                                       {"n2", "train"},
                                       {"n2", "labels"}});
  for (const StageAheadSend& send : sends) {
    CHECK(send.job_id == 7);
    // The wait until the start, plus the margin.
    CHECK(send.hold_ms == 10 * kMinute + h.planner.options().hold_margin_ms);
  }
  // Not again while under way, nor once done.
  CHECK(h.PlanAndSend(now + 1000).empty());
  h.AnswerAll(true, now + 2000);
  CHECK(h.PlanAndSend(now + 3000).empty());
  CHECK(h.planner.next_plan_ms() == 0);
}

TEST_CASE(
    "nothing is sent beyond the window, and the planner asks to be "
    "woken when the reservation enters it",
    "[stage_ahead]") {
  StageAheadOptions options;
  options.window_ms = kHour;
  Harness h(options);
  const int64_t now = 1000 * kHour;
  const int64_t start = now + 3 * kHour;
  h.planner.SetTargets({Target(1, start, {"n1"})});
  CHECK(h.PlanAndSend(now).empty());
  CHECK(h.planner.next_plan_ms() == start - kHour);
  CHECK(h.PlanAndSend(start - kHour - 1).empty());
  std::vector<StageAheadSend> sends = h.PlanAndSend(start - kHour);
  REQUIRE(sends.size() == 1);
  // The hold never exceeds the window plus the margin.
  CHECK(sends[0].hold_ms == kHour + options.hold_margin_ms);
}

TEST_CASE("a window of 0 turns staging ahead off", "[stage_ahead]") {
  StageAheadOptions options;
  options.window_ms = 0;
  Harness h(options);
  CHECK_FALSE(h.planner.enabled());
  h.planner.SetTargets({Target(1, 5, {"n1"})});
  CHECK(h.PlanAndSend(5).empty());
}

TEST_CASE("jobs without datasets or without usable nodes are ignored",
          "[stage_ahead]") {
  Harness h;
  h.planner.SetTargets({Target(1, 100, {"n1"}, {}), Target(2, 100, {})});
  CHECK(h.PlanAndSend(50).empty());
  CHECK(h.planner.next_plan_ms() == 0);
}

TEST_CASE("a reservation that moves gets the new nodes, not the old again",
          "[stage_ahead]") {
  Harness h;
  const int64_t now = 1000 * kHour;
  h.planner.SetTargets({Target(3, now + kMinute, {"n1", "n2"})});
  CHECK(h.PlanAndSend(now).size() == 2);
  h.AnswerAll(true, now + 10);
  // Another pass: the job now expects n2 and n3.
  h.planner.SetTargets({Target(3, now + kMinute, {"n2", "n3"})});
  std::vector<StageAheadSend> sends = h.PlanAndSend(now + 20);
  REQUIRE(sends.size() == 1);
  CHECK(sends[0].node == "n3");
  // Back to n1: its copy is there and pinned; nothing to send.
  h.planner.SetTargets({Target(3, now + kMinute, {"n1"})});
  CHECK(h.PlanAndSend(now + 30).empty());
}

TEST_CASE("a failed copy is sent again after a back-off that doubles",
          "[stage_ahead]") {
  StageAheadOptions options;
  options.min_retry_ms = 30'000;
  options.max_retry_ms = 100'000;
  Harness h(options);
  const int64_t now = 1000 * kHour;
  h.planner.SetTargets({Target(4, now + 30 * kMinute, {"n1"})});
  REQUIRE(h.PlanAndSend(now).size() == 1);
  h.Answer(h.ids.back(), false, now + 1000);
  // First failure: 30 s after the answer.
  CHECK(h.PlanAndSend(now + 1000 + 29'999).empty());
  CHECK(h.planner.next_plan_ms() == now + 1000 + 30'000);
  REQUIRE(h.PlanAndSend(now + 1000 + 30'000).size() == 1);
  // Second failure: 60 s.
  int64_t answered = now + 40'000;
  h.Answer(h.ids.back(), false, answered);
  CHECK(h.PlanAndSend(answered + 59'999).empty());
  REQUIRE(h.PlanAndSend(answered + 60'000).size() == 1);
  // Third: 120 s, held to the 100 s cap.
  answered += 70'000;
  h.Answer(h.ids.back(), false, answered);
  CHECK(h.PlanAndSend(answered + 99'999).empty());
  REQUIRE(h.PlanAndSend(answered + 100'000).size() == 1);
  // A success ends the retries.
  h.Answer(h.ids.back(), true, answered + 100'500);
  CHECK(h.PlanAndSend(answered + 10 * kMinute).empty());
}

TEST_CASE("a node that loses its agent fails the copy, retried later",
          "[stage_ahead]") {
  Harness h;
  const int64_t now = 1000 * kHour;
  h.planner.SetTargets({Target(5, now + kMinute, {"n1"})});
  REQUIRE(h.PlanAndSend(now).size() == 1);
  h.requests.NodeGone("n1", now + 5);
  CHECK(h.PlanAndSend(now + 10).empty());
  CHECK(h.PlanAndSend(now + 5 + h.planner.options().min_retry_ms).size() == 1);
}

TEST_CASE("an undelivered send is proposed again on the next plan",
          "[stage_ahead]") {
  Harness h;
  const int64_t now = 1000 * kHour;
  h.planner.SetTargets({Target(5, now + kMinute, {"n1"})});
  // The controller could not deliver it (no agent): it records nothing.
  CHECK(h.planner.Plan(h.requests, now).size() == 1);
  CHECK(h.planner.Plan(h.requests, now + 1).size() == 1);
}

TEST_CASE("a pin that would lapse before a later start is renewed",
          "[stage_ahead]") {
  StageAheadOptions options;
  options.window_ms = kHour;
  options.hold_margin_ms = 10 * kMinute;
  Harness h(options);
  const int64_t now = 1000 * kHour;
  h.planner.SetTargets({Target(6, now + 20 * kMinute, {"n1"})});
  REQUIRE(h.PlanAndSend(now).size() == 1);  // pinned until now + 30 min
  h.AnswerAll(true, now + 1000);
  // The start moves a little: the pin still covers it.
  h.planner.SetTargets({Target(6, now + 24 * kMinute, {"n1"})});
  CHECK(h.PlanAndSend(now + 2000).empty());
  // It moves out by 40 minutes: sent again to renew the pin.
  h.planner.SetTargets({Target(6, now + 60 * kMinute, {"n1"})});
  std::vector<StageAheadSend> sends = h.PlanAndSend(now + 3000);
  REQUIRE(sends.size() == 1);
  CHECK(sends[0].hold_ms == 60 * kMinute - 3000 + 10 * kMinute);
  h.AnswerAll(true, now + 4000);
  CHECK(h.PlanAndSend(now + 5000).empty());
}

TEST_CASE("at most a few prefetches under way per node, soonest job first",
          "[stage_ahead]") {
  StageAheadOptions options;
  options.max_in_flight_per_node = 2;
  Harness h(options);
  const int64_t now = 1000 * kHour;
  // Another sender's prefetch (gantry cache) is under way on n1.
  DatasetRequest other;
  other.node = "n1";
  other.dataset = "other";
  const uint64_t other_id = h.requests.Add(other);
  h.planner.SetTargets({Target(9, now + 30 * kMinute, {"n1"}, {"c", "d"}),
                        Target(8, now + 10 * kMinute, {"n1"}, {"a", "b"})});
  std::vector<StageAheadSend> sends = h.PlanAndSend(now);
  REQUIRE(sends.size() == 1);
  CHECK(sends[0].job_id == 8);
  CHECK(sends[0].dataset == "a");
  v1::DatasetCacheResult done;
  done.set_request_id(other_id);
  done.set_ok(true);
  REQUIRE(h.requests.Finish("n1", done, now + 1));
  sends = h.PlanAndSend(now + 2);
  REQUIRE(sends.size() == 1);
  CHECK(sends[0].dataset == "b");
  h.AnswerAll(true, now + 3);
  sends = h.PlanAndSend(now + 4);
  using P = std::pair<std::string, std::string>;
  CHECK(Pairs(sends) == std::vector<P>{{"n1", "c"}, {"n1", "d"}});
}

TEST_CASE("at most max_sends_per_pass per plan, the rest soon after",
          "[stage_ahead]") {
  StageAheadOptions options;
  options.max_sends_per_pass = 3;
  Harness h(options);
  const int64_t now = 1000 * kHour;
  h.planner.SetTargets(
      {Target(1, now + kMinute, {"n1", "n2", "n3", "n4", "n5"})});
  CHECK(h.PlanAndSend(now).size() == 3);
  CHECK(h.planner.next_plan_ms() > now);
  CHECK(h.PlanAndSend(h.planner.next_plan_ms()).size() == 2);
}

TEST_CASE("a job forgotten (started, ended, cancelled) is sent nothing more",
          "[stage_ahead]") {
  Harness h;
  const int64_t now = 1000 * kHour;
  h.planner.SetTargets({Target(1, now + kMinute, {"n1"}),
                        Target(2, now + kMinute, {"n1"}, {"x"})});
  REQUIRE(h.PlanAndSend(now).size() == 2);
  CHECK(h.planner.recorded_jobs() == 2);
  h.planner.Forget(1);
  h.planner.Forget(2);
  CHECK(h.planner.recorded_jobs() == 0);
  h.AnswerAll(false, now + 1);
  CHECK(h.PlanAndSend(now + kHour).empty());
}

TEST_CASE("a node whose agent restarted is asked again, the others are not",
          "[stage_ahead]") {
  Harness h;
  const int64_t now = 1000 * kHour;
  h.planner.SetTargets({Target(1, now + 10 * kMinute, {"n1", "n2"})});
  REQUIRE(h.PlanAndSend(now).size() == 2);
  h.AnswerAll(true, now + 1000);
  CHECK(h.PlanAndSend(now + 2000).empty());
  // n2's agent restarted: the hold it kept for job 1 is gone.
  h.planner.NodeRestarted("n2");
  const std::vector<StageAheadSend> again = h.PlanAndSend(now + 3000);
  REQUIRE(again.size() == 1);
  CHECK(again[0].node == "n2");
  CHECK(again[0].job_id == 1);
  CHECK(again[0].hold_ms ==
        10 * kMinute - 3000 + h.planner.options().hold_margin_ms);
}

}  // namespace stage_ahead_test
}  // namespace gantry
