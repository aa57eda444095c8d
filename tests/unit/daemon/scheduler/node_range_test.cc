// The size of a job with a node range (--nodes=MIN-MAX): the size decision
// as tables, and the scheduler placing such jobs (first start, restart
// after a lost node with and without a spare, growing back).
#include "daemon/scheduler/node_range.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "daemon/scheduler/scheduler.h"

namespace gantry {
namespace node_range_test {

TEST_CASE("NodeRangeOf: no range, a range, a degenerate one", "[node_range]") {
  struct Case {
    uint32_t nodes, min_nodes, min, max;
    bool is_range;
  };
  const std::vector<Case> cases = {
      {4, 0, 4, 4, false},  // no range
      {4, 4, 4, 4, false},  // 4-4 is 4
      {4, 3, 3, 4, true},   // 3-4
      {64, 48, 48, 64, true},
      {4, 9, 4, 4, false},  // a damaged record: no range
      {0, 0, 1, 1, false},  // no -N: one node
  };
  for (const Case& c : cases) {
    INFO("nodes " << c.nodes << " min_nodes " << c.min_nodes);
    const NodeRange range = NodeRangeOf(c.nodes, c.min_nodes);
    CHECK(range.min == c.min);
    CHECK(range.max == c.max);
    CHECK(range.IsRange() == c.is_range);
  }
}

TEST_CASE("LargestFittingSize: the most nodes that fit, at least MIN",
          "[node_range]") {
  struct Case {
    uint32_t min, max, capable;
    uint32_t fitting;  // fits(n) holds for n <= fitting
    std::optional<uint32_t> expected;
  };
  const std::vector<Case> cases = {
      {3, 4, 4, 4, 4},                 // all free: the full size
      {3, 4, 4, 3, 3},                 // one lost, no spare: shrink to 3
      {3, 4, 4, 2, std::nullopt},      // below the minimum: wait
      {48, 64, 64, 60, 60},            // a big range, in the middle
      {48, 64, 64, 48, 48},            // exactly the minimum
      {48, 64, 64, 63, 63},            // one short of the maximum
      {48, 64, 50, 64, 50},            // only 50 could ever hold it
      {48, 64, 40, 64, std::nullopt},  // not even MIN could ever
      {1, 100000, 100000, 77777, 77777},
      {4, 4, 4, 4, 4},             // a fixed size that fits
      {4, 4, 4, 3, std::nullopt},  // and one that does not
  };
  for (const Case& c : cases) {
    INFO(c.min << "-" << c.max << " capable " << c.capable << " fitting "
               << c.fitting);
    std::set<uint32_t> asked;
    const std::optional<uint32_t> size =
        LargestFittingSize({c.min, c.max}, c.capable, [&](uint32_t n) {
          CHECK(n >= c.min);
          CHECK(n <= std::min(c.max, c.capable));
          asked.insert(n);
          return n <= c.fitting;
        });
    CHECK(size == c.expected);
    // The full size first, then a binary search: few placements per job.
    uint32_t bound = 2;
    for (uint32_t span = c.max - c.min; span > 0; span /= 2) ++bound;
    CHECK(asked.size() <= bound);
  }
}

TEST_CASE("DecideGrow: only --elastic jobs, only back to full size",
          "[node_range]") {
  struct Case {
    const char* what;
    GrowInput input;
    GrowAction expected;
  };
  auto input = [](uint32_t current, uint32_t free, bool elastic,
                  bool checkpoint, bool since = false, bool waiting = false) {
    GrowInput in;
    in.range = {3, 4};
    in.current_nodes = current;
    in.free_nodes = free;
    in.elastic = elastic;
    in.has_checkpoint = checkpoint;
    in.checkpoint_since_wait = since;
    in.others_waiting = waiting;
    return in;
  };
  GrowInput short_grow = input(3, 1, true, false);
  short_grow.grow_fell_short = true;
  GrowInput fixed = input(3, 1, true, false);
  fixed.range = {4, 4};
  const std::vector<Case> cases = {
      {"not elastic: waits for its next restart", input(3, 1, false, false),
       GrowAction::kNone},
      {"no checkpoint ever: at once", input(3, 1, true, false),
       GrowAction::kNow},
      {"checkpoints: at the next one", input(3, 1, true, true),
       GrowAction::kAtNextCheckpoint},
      {"the next checkpoint came", input(3, 1, true, true, true),
       GrowAction::kNow},
      {"not enough free for the full size", input(3, 0, true, false),
       GrowAction::kNone},
      {"already full", input(4, 2, true, false), GrowAction::kNone},
      {"a job waits for nodes", input(3, 1, true, false, false, true),
       GrowAction::kNone},
      {"no range", fixed, GrowAction::kNone},
      {"this attempt is a grow that fell short: no loop", short_grow,
       GrowAction::kNone},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    CHECK(DecideGrow(c.input) == c.expected);
  }
  GrowInput far = input(3, 1, true, false);
  far.range = {2, 8};
  far.current_nodes = 5;
  far.free_nodes = 2;  // 7 of 8: not worth a restart
  CHECK(DecideGrow(far) == GrowAction::kNone);
  far.free_nodes = 3;
  CHECK(DecideGrow(far) == GrowAction::kNow);
}

NodeSnapshot Node(std::string name, bool spare = false) {
  NodeSnapshot n;
  n.name = std::move(name);
  n.partitions = {"main"};
  n.cpus_total = n.cpus_free = 4;
  n.mem_total_mb = n.mem_free_mb = 64000;
  n.hot_spare = spare;
  return n;
}

PendingJob RangeJob(uint64_t id, uint32_t min, uint32_t max,
                    bool restart = false) {
  PendingJob j;
  j.id = JobId(id);
  j.partition = "main";
  j.nodes = max;
  j.min_nodes = min;
  j.max_tasks_per_node = 2;
  j.cpus_per_task = 1;
  j.is_restart = restart;
  return j;
}

std::vector<std::string> Names(const std::vector<NodeSnapshot>& nodes,
                               const JobStart& start) {
  std::vector<std::string> names;
  for (const NodeShare& share : start.shares) {
    names.push_back(nodes[share.node.index()].name);
  }
  return names;
}

TEST_CASE("A range job starts on as many nodes as are free, up to MAX",
          "[node_range][scheduler]") {
  struct Case {
    const char* what;
    uint32_t free_nodes;  // of 6, the rest busy
    uint32_t min, max;
    uint32_t expected;  // 0: waits
  };
  const std::vector<Case> cases = {
      {"room for all", 6, 3, 4, 4},
      {"room for 3", 3, 3, 4, 3},
      {"room for 2 of 3-4", 2, 3, 4, 0},
      {"room for 5 of 2-8", 5, 2, 8, 5},
      {"a fixed size as before", 6, 0, 4, 4},
      {"a fixed size waits", 3, 0, 4, 0},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    std::vector<NodeSnapshot> nodes;
    for (int i = 0; i < 6; ++i) nodes.push_back(Node("n" + std::to_string(i)));
    for (uint32_t i = c.free_nodes; i < 6; ++i) nodes[i].cpus_free = 0;
    const ScheduleResult r = Schedule(nodes, {RangeJob(1, c.min, c.max)});
    if (c.expected == 0) {
      CHECK(r.starts.empty());
      REQUIRE(r.waits.size() == 1);
      CHECK(r.waits[0].reason == "Resources");
    } else {
      REQUIRE(r.starts.size() == 1);
      CHECK(r.starts[0].shares.size() == c.expected);
    }
  }
}

TEST_CASE("A restart after a lost node: a spare first, else shrink",
          "[node_range][scheduler]") {
  // a0..a3 ran the job; a3 is lost. s0 is a hot spare.
  std::vector<NodeSnapshot> nodes = {Node("a0"), Node("a1"), Node("a2"),
                                     Node("a3"), Node("s0", true)};
  nodes[3].schedulable = false;
  ScheduleResult r = Schedule(nodes, {RangeJob(1, 3, 4, true)});
  REQUIRE(r.starts.size() == 1);
  CHECK(r.starts[0].shares.size() == 4);
  std::vector<std::string> names = Names(nodes, r.starts[0]);
  CHECK(std::count(names.begin(), names.end(), "s0") == 1);

  // No spare free: the three nodes it still has.
  nodes[4].cpus_free = 0;
  r = Schedule(nodes, {RangeJob(1, 3, 4, true)});
  REQUIRE(r.starts.size() == 1);
  names = Names(nodes, r.starts[0]);
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"a0", "a1", "a2"});

  // Two lost: below the minimum, it waits as a job without a range.
  nodes[2].schedulable = false;
  r = Schedule(nodes, {RangeJob(1, 3, 4, true)});
  CHECK(r.starts.empty());

  // The same job without a range waits for a spare even with three left.
  nodes[2].schedulable = true;
  r = Schedule(nodes, {RangeJob(1, 0, 4, true)});
  CHECK(r.starts.empty());

  // The lost node is back: the next restart is at full size again.
  nodes[3].schedulable = true;
  r = Schedule(nodes, {RangeJob(1, 3, 4, true)});
  REQUIRE(r.starts.size() == 1);
  CHECK(r.starts[0].shares.size() == 4);
}

TEST_CASE("A range job does not take what a job ahead of it needs",
          "[node_range][scheduler]") {
  std::vector<NodeSnapshot> nodes;
  for (int i = 0; i < 6; ++i) nodes.push_back(Node("n" + std::to_string(i)));
  PendingJob first = RangeJob(1, 0, 2);
  first.max_tasks_per_node = 4;  // all 4 CPUs of its two nodes
  const ScheduleResult r = Schedule(nodes, {first, RangeJob(2, 2, 6)});
  REQUIRE(r.starts.size() == 2);
  CHECK(r.starts[0].shares.size() == 2);
  CHECK(r.starts[1].shares.size() == 4);
}

}  // namespace node_range_test
}  // namespace gantry
