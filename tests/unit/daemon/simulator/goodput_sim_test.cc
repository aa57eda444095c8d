// gantry-sim's goodput engine: each recovery policy on a four-node job and
// a fixed failure schedule, with every figure worked out by hand in the
// comments, and the attempt accounting on its own.
#include <catch2/catch.hpp>
#include <cmath>

#include "daemon/simulator/goodput_sim.h"

namespace gantry::sim {
namespace goodput_sim_test {

constexpr int64_t kHour = 3600 * 1000;

// Four nodes of 8 GPUs on one leaf; checkpoints every hour, 10 s to write;
// init 100 s, load 50 s; repair 1 h.
GoodputConfig Config() {
  GoodputConfig c;
  c.cluster.nodes = 4;
  c.cluster.gpus_per_node = 8;
  c.cluster.nodes_per_leaf = 4;
  c.checkpoint_interval_s = 3600;
  c.checkpoint_write_s = 10;
  c.init_s = 100;
  c.load_s = 50;
  c.repair_s = 3600;
  return c;
}

// One job on all four nodes with 10 h of work.
std::vector<GoodputJob> OneJob() {
  return {{.id = JobId(1),
           .submit_ms = 0,
           .work_ms = 10 * kHour,
           .gpus = 32,
           .user = "u"}};
}

FailureEvent Hardware(int64_t ms, std::vector<uint32_t> nodes) {
  FailureEvent e;
  e.time_ms = ms;
  e.nodes = std::move(nodes);
  e.kind = "faulty GPU";
  e.correlated = e.nodes.size() > 1;
  return e;
}

RecoveryPolicy Policy(const std::string& name, uint32_t spares) {
  for (RecoveryPolicy p : StandardRecoveryPolicies(spares)) {
    if (p.name == name) {
      p.preflight_s = 0;  // on only where a test says
      return p;
    }
  }
  FAIL("no policy " << name);
  return {};
}

GoodputReport Run(const GoodputConfig& config, const RecoveryPolicy& policy,
                  std::vector<FailureEvent> failures,
                  std::vector<GoodputJob> jobs = OneJob()) {
  ListFailureSource source(std::move(failures));
  absl::StatusOr<GoodputReport> report =
      SimulateGoodput(jobs, config, policy, source);
  REQUIRE(report.ok());
  REQUIRE(report->jobs_finished == static_cast<int>(jobs.size()));
  return *report;
}

// The split of the only job, in seconds.
const TimeSplit& Split(const GoodputReport& r) {
  return r.outcomes.front().split;
}

TEST_CASE("Attempt accounting: duration, checkpoints, lost work") {
  AttemptPlan plan;
  plan.launch_ms = 3000;
  plan.init_ms = 120000;
  plan.interval_ms = 1000000;
  plan.write_ms = 10000;
  // 3,600 s of work: 3 checkpoints written (not one at the very end).
  CHECK(AttemptDurationMs(plan, 3600000) == 123000 + 3600000 + 30000);
  // Failing 2,000 s after placement: 1,877 s trained = one cycle (1,010 s)
  // and 867 s since the checkpoint, lost.
  TimeSplit split;
  CHECK(AccountFailed(plan, 2000000, 3600000, -1, split) == 1000000);
  CHECK(split[GoodputKind::kStarting] == 123);
  CHECK(split[GoodputKind::kProductive] == 1000);
  CHECK(split[GoodputKind::kCheckpoint] == 10);
  CHECK(split[GoodputKind::kLost] == Approx(867));
  CHECK(split.Wall() == Approx(2000));
  // During a checkpoint write: the whole interval and the write are lost.
  TimeSplit during;
  CHECK(AccountFailed(plan, 123000 + 2015000, 3600000, -1, during) == 1000000);
  CHECK(during[GoodputKind::kLost] == Approx(1005));
  // Just-in-time: only 5 s of the 867 are lost.
  TimeSplit jit;
  CHECK(AccountFailed(plan, 2000000, 3600000, 5000, jit) == 1862000);
  CHECK(jit[GoodputKind::kLost] == Approx(5));
  CHECK(jit[GoodputKind::kProductive] == Approx(1862));
  // Shrunk to 3/4: the missing quarter is degraded time.
  plan.speed = 0.75;
  TimeSplit shrunk;
  AccountFinished(plan, 750000, shrunk);
  CHECK(shrunk[GoodputKind::kProductive] == Approx(750));
  CHECK(shrunk[GoodputKind::kDegraded] == Approx(250));
  CHECK(shrunk[GoodputKind::kCheckpoint] == 0);
}

TEST_CASE("No failures: ETTR is work over work, start and checkpoints") {
  const GoodputReport r = Run(Config(), Policy("gantry", 1), {});
  // 3 s launch + 100 s init, 36,000 s of work, 9 checkpoints of 10 s.
  CHECK(r.outcomes.front().end_ms == (103 + 36000 + 90) * 1000);
  CHECK(r.Ettr() == Approx(36000.0 / 36193));
  CHECK(r.restarts == 0);
}

TEST_CASE("gantry: one node lost, restarted on the spare after detection") {
  const GoodputReport r =
      Run(Config(), Policy("gantry", 1), {Hardware(2 * kHour, {0})});
  // Attempt 1: 103 s starting, one cycle (3,600 s saved, 10 s writing),
  // 3,487 s lost. Noticed 3 s later, restarted at 7,203 s on the spare:
  // 3 + 100 + 50 s, then 32,400 s of work and 8 writes: ends at 39,836 s.
  const TimeSplit& s = Split(r);
  CHECK(r.outcomes.front().end_ms == 39836 * 1000);
  CHECK(s[GoodputKind::kLost] == Approx(3487));
  CHECK(s[GoodputKind::kDetecting] == 3);
  CHECK(s[GoodputKind::kRecovering] == 153);
  CHECK(s[GoodputKind::kQueued] == 0);
  CHECK(s[GoodputKind::kStarting] == 103);
  CHECK(s[GoodputKind::kCheckpoint] == 90);
  CHECK(r.Ettr() == Approx(36000.0 / 39836));
  CHECK(r.restarts == 1);
}

TEST_CASE("gantry: a whole leaf at once is one restart") {
  GoodputConfig config = Config();
  config.cluster.nodes_per_leaf = 2;  // nodes 0-1 share a leaf
  const GoodputReport r =
      Run(config, Policy("gantry", 2), {Hardware(2 * kHour, {0, 1})});
  CHECK(r.restarts == 1);
  CHECK(r.job_failures == 1);
  CHECK(r.Ettr() == Approx(36000.0 / 39836));
}

TEST_CASE(
    "gantry: nodes failing apart while the restart is pending cost it "
    "nothing more") {
  // Node 1 fails 2 s after node 0, before the failure is noticed (3 s):
  // still one restart at 7,203 s.
  const GoodputReport r =
      Run(Config(), Policy("gantry", 2),
          {Hardware(2 * kHour, {0}), Hardware(2 * kHour + 2000, {1})});
  CHECK(r.restarts == 1);
  CHECK(r.outcomes.front().end_ms == 39836 * 1000);
}

TEST_CASE("gantry+jit: the state is saved at the failure") {
  const GoodputReport r =
      Run(Config(), Policy("gantry+jit", 1), {Hardware(2 * kHour, {0})});
  // Of the 3,487 s since the checkpoint only the 10 s step is lost; 60 s to
  // save. Attempt 2 at 7,263 s: 153 s, 28,923 s of work, 8 writes: 36,419 s.
  const TimeSplit& s = Split(r);
  CHECK(s[GoodputKind::kLost] == Approx(10));
  CHECK(s[GoodputKind::kRecovering] == Approx(60 + 153));
  CHECK(r.outcomes.front().end_ms == 36419 * 1000);
  CHECK(r.Ettr() == Approx(36000.0 / 36419));
}

TEST_CASE("slurm: requeued by an operator, back on the repaired node") {
  const GoodputReport r =
      Run(Config(), Policy("slurm", 0), {Hardware(2 * kHour, {0})});
  // Attempt 1: 10 + 100 s starting, 3,600 saved, 3,480 s lost. Noticed
  // after 300 s, requeued after 1,800 s more (9,300 s), node 0 back at
  // 10,800 s: 1,500 s queued. Attempt 2: 160 s + 32,400 + 80: 43,440 s.
  const TimeSplit& s = Split(r);
  CHECK(s[GoodputKind::kLost] == Approx(3480));
  CHECK(s[GoodputKind::kDetecting] == 300);
  CHECK(s[GoodputKind::kQueued] == Approx(1800 + 1500));
  CHECK(s[GoodputKind::kRecovering] == 160);
  CHECK(r.outcomes.front().end_ms == 43440 * 1000);
  CHECK(r.Ettr() == Approx(36000.0 / 43440));
}

TEST_CASE("kueue: one failure is swapped, a second one evicts the job") {
  SECTION("one") {
    const GoodputReport r =
        Run(Config(), Policy("kueue", 1), {Hardware(2 * kHour, {0})});
    // 30 + 100 s starting, 3,460 s lost, 40 s to notice, back at 7,240 s on
    // the spare: 180 s + 32,400 + 80 = 39,900 s.
    CHECK(r.evictions == 0);
    CHECK(Split(r)[GoodputKind::kLost] == Approx(3460));
    CHECK(r.outcomes.front().end_ms == 39900 * 1000);
  }
  SECTION("two apart") {
    // Node 1 fails 20 s later, while node 0 is being replaced: evicted,
    // re-admitted after 60 s (7,300 s), but only 3 nodes are up (2, 3 and
    // the spare) until node 0 is back at 10,800 s.
    const GoodputReport r =
        Run(Config(), Policy("kueue", 1),
            {Hardware(2 * kHour, {0}), Hardware(2 * kHour + 20000, {1})});
    CHECK(r.evictions == 1);
    CHECK(Split(r)[GoodputKind::kDetecting] == 40);
    CHECK(Split(r)[GoodputKind::kQueued] == Approx(60 + 3500));
    CHECK(r.outcomes.front().end_ms == (10800 + 32660) * 1000);
    CHECK(r.Ettr() == Approx(36000.0 / 43460));
  }
  SECTION("two at once") {
    GoodputConfig config = Config();
    config.cluster.nodes_per_leaf = 2;
    const GoodputReport r =
        Run(config, Policy("kueue", 2), {Hardware(2 * kHour, {0, 1})});
    // Evicted at once; back at 7,240 + 60 s on nodes 2, 3 and the spares.
    CHECK(r.evictions == 1);
    CHECK(r.outcomes.front().end_ms == (7300 + 32660) * 1000);
  }
  SECTION("during the restart") {
    // A rank crash on node 1 (no spare needed) 100 s into the swapped
    // attempt's start-up (7,340 s): a second failure during the swap.
    FailureEvent crash = Hardware(7340 * 1000, {1});
    crash.fault = FaultClass::kSoftware;
    const GoodputReport r =
        Run(Config(), Policy("kueue", 1), {Hardware(2 * kHour, {0}), crash});
    CHECK(r.evictions == 1);
    // Once training again, a crash is a restart in place, not an eviction.
    crash.time_ms = 8000 * 1000;
    const GoodputReport later =
        Run(Config(), Policy("kueue", 1), {Hardware(2 * kHour, {0}), crash});
    CHECK(later.evictions == 0);
    CHECK(later.restarts == 2);
  }
}

TEST_CASE("gantry: no spare and a node range: shrink, not wait") {
  GoodputConfig config = Config();
  config.min_nodes_fraction = 0.75;  // 3 of 4 nodes
  const GoodputReport r =
      Run(config, Policy("gantry", 0), {Hardware(2 * kHour, {0})});
  // Back at 7,203 s on 3 nodes: 32,400 s of work take 43,200 s, with 11
  // writes: 153 + 43,200 + 110 s, ending at 50,666 s; a quarter of the
  // training is degraded.
  CHECK(r.shrunk_attempts == 1);
  CHECK(Split(r)[GoodputKind::kDegraded] == Approx(10800));
  CHECK(r.outcomes.front().end_ms == 50666 * 1000);
  // Without a range the job waits for the repair (10,800 s) instead.
  const GoodputReport fixed =
      Run(Config(), Policy("gantry", 0), {Hardware(2 * kHour, {0})});
  CHECK(fixed.shrunk_attempts == 0);
  CHECK(fixed.outcomes.front().end_ms == (10800 + 32633) * 1000);
}

TEST_CASE("gantry: a shrunk job that can take it grows back at once") {
  GoodputConfig config = Config();
  config.min_nodes_fraction = 0.75;
  RecoveryPolicy gantry = Policy("gantry", 0);
  gantry.grow_at_once = true;
  const GoodputReport r = Run(config, gantry, {Hardware(2 * kHour, {0})});
  // On 3 nodes from 7,203 s, training from 7,356 s. Node 0 is back at
  // 10,800 s: 3,444 s trained at 3/4 (2,583 s of work) are saved by a
  // 10 s checkpoint; back on 4 nodes at 10,810 s: 153 s, 29,817 s of work
  // and 8 writes end at 40,860 s.
  CHECK(r.grows == 1);
  CHECK(r.restarts == 1);
  CHECK(Split(r)[GoodputKind::kLost] ==
        Approx(3487));  // the failure's, none more
  CHECK(Split(r)[GoodputKind::kDegraded] == Approx(861));
  CHECK(r.outcomes.front().end_ms == 40860 * 1000);
  CHECK(r.Ettr() == Approx(36000.0 / 40860));
}

TEST_CASE("gantry: pre-flight catches a bad node before the ranks start") {
  GoodputConfig config = Config();
  config.bad_nodes = {0};
  config.bad_fail_after_s = 600;
  RecoveryPolicy gantry = Policy("gantry", 1);
  gantry.preflight_s = 10;
  gantry.preflight_catch = 1;
  const GoodputReport caught = Run(config, gantry, {});
  // Placed on 0-3, caught at 13 s; placed on 1-3 and the spare at once:
  // 3 + 10 + 100 s, 36,000 s of work and 9 writes: 36,216 s, nothing lost.
  CHECK(caught.preflight_catches == 1);
  CHECK(caught.restarts == 0);
  CHECK(Split(caught)[GoodputKind::kPreflight] == 20);
  CHECK(Split(caught)[GoodputKind::kLost] == 0);
  CHECK(caught.outcomes.front().end_ms == 36216 * 1000);

  // Without pre-flight the node fails 600 s into training (703 s): 600 s
  // lost, 3 s to notice, then 153 s + 36,000 + 90 on the spare.
  gantry.preflight_s = 0;
  const GoodputReport missed = Run(config, gantry, {});
  CHECK(missed.preflight_catches == 0);
  CHECK(missed.restarts == 1);
  CHECK(Split(missed)[GoodputKind::kLost] == Approx(600));
  CHECK(missed.outcomes.front().end_ms == (706 + 36243) * 1000);
}

TEST_CASE("A job that can never run again stops at the horizon") {
  // The only nodes: node 0 fails and comes back bad every time, and
  // pre-flight always catches it. The run ends, with the job unfinished.
  GoodputConfig config = Config();
  config.bad_after_repair = 1;
  RecoveryPolicy gantry = Policy("gantry", 0);
  gantry.preflight_s = 10;
  gantry.preflight_catch = 1;
  ListFailureSource source({Hardware(kHour, {0})});
  absl::StatusOr<GoodputReport> r =
      SimulateGoodput(OneJob(), config, gantry, source);
  REQUIRE(r.ok());
  CHECK(r->jobs_finished == 0);
  CHECK(r->outcomes.front().end_ms == -1);
  CHECK(r->preflight_catches > 100);
}

TEST_CASE("Software faults keep the node, hangs wait for the watchdog") {
  FailureEvent crash = Hardware(2 * kHour, {0});
  crash.fault = FaultClass::kSoftware;
  // No spares needed: node 0 stays up; noticed at once, back at 7,200 s.
  const GoodputReport r = Run(Config(), Policy("gantry", 0), {crash});
  CHECK(Split(r)[GoodputKind::kDetecting] == 0);
  CHECK(r.outcomes.front().end_ms == (7200 + 32633) * 1000);

  FailureEvent hang = crash;
  hang.fault = FaultClass::kHang;
  const GoodputReport h = Run(Config(), Policy("gantry", 0), {hang});
  CHECK(Split(h)[GoodputKind::kDetecting] == 600);
  CHECK(h.outcomes.front().end_ms == (7800 + 32633) * 1000);
}

TEST_CASE("A failure on an idle node only takes it out for repair") {
  // Node 4 is the spare: the job never notices.
  const GoodputReport r =
      Run(Config(), Policy("gantry", 1), {Hardware(kHour, {4})});
  CHECK(r.job_failures == 0);
  CHECK(r.outcomes.front().end_ms == (103 + 36000 + 90) * 1000);
}

TEST_CASE("Memory peers are under another leaf switch") {
  ClusterShape shape;
  shape.nodes_per_leaf = 2;
  for (uint32_t nodes : {3u, 4u, 5u, 6u, 7u, 2064u}) {
    shape.nodes = nodes;
    for (uint32_t n = 0; n < nodes; ++n) {
      const uint32_t peer = MemoryPeerOf(shape, n);
      CHECK(peer < nodes);
      CHECK(LeafOf(shape, peer) != LeafOf(shape, n));
    }
  }
  // The same position under the next leaf; the last leaf's go to the first.
  shape.nodes = 6;
  CHECK(MemoryPeerOf(shape, 0) == 2);
  CHECK(MemoryPeerOf(shape, 3) == 5);
  CHECK(MemoryPeerOf(shape, 5) == 1);
  // One leaf: no other failure domain, the next node.
  shape.nodes = 2;
  shape.nodes_per_leaf = 4;
  CHECK(MemoryPeerOf(shape, 1) == 0);
}

TEST_CASE("Attempt accounting with in-memory snapshots") {
  // Snapshots every 200 s of training (1 s to write), a persistent
  // checkpoint every 1,000 s (10 s): every 5th snapshot is persisted too.
  // A cycle is 201 s, a persistent period 5 x 201 + 10 = 1,015 s.
  AttemptPlan plan;
  plan.launch_ms = 3000;
  plan.init_ms = 120000;
  plan.interval_ms = 1000000;
  plan.write_ms = 10000;
  plan.memory_interval_ms = 200000;
  plan.memory_write_ms = 1000;
  CHECK(plan.PersistentEvery() == 5);
  // 3,000 s of work: 14 snapshots and 2 persistent writes, none at the end.
  CHECK(AttemptDurationMs(plan, 3000000) == 123000 + 3000000 + 14000 + 20000);

  SECTION("the newest replicated snapshot") {
    // 1,465 s of training wall time: one period, two cycles and 48 s.
    const ResumePoints at = ResumePointsAt(plan, 1588000, 10000);
    CHECK(at.trained_ms == Approx(1448000));
    CHECK(at.writing_ms == Approx(17000));
    CHECK(at.cut_write_ms == Approx(0));
    CHECK(at.persistent_ms == Approx(1000000));
    // Snapshot 7 written at 7 x 201 + 10 = 1,417 s, replicated at 1,427 s.
    CHECK(at.memory_ms == Approx(1400000));
    CHECK(at.memory_written_ms == Approx(123000 + 1417000));
    TimeSplit split;
    CHECK(AccountFailedFrom(plan, at, 1588000, at.memory_ms, 3000000, split) ==
          Approx(1400000));
    CHECK(split[GoodputKind::kLost] == Approx(48));
    CHECK(split[GoodputKind::kCheckpoint] == Approx(17));
    CHECK(split.Wall() == Approx(1588));
  }
  SECTION("a snapshot still replicating does not count") {
    // 5 s after snapshot 7's write: snapshot 6 (written at 1,216 s) it is.
    const ResumePoints at = ResumePointsAt(plan, 123000 + 1422000, 10000);
    CHECK(at.memory_ms == Approx(1200000));
    CHECK(at.memory_written_ms == Approx(123000 + 1216000));
    CHECK(at.trained_ms - at.memory_ms == Approx(205000));
  }
  SECTION("during a persistent write") {
    // 5 s before the second period ends: snapshot 10 written at 2,020 s is
    // not replicated, and the persistent write is cut short.
    const ResumePoints at = ResumePointsAt(plan, 123000 + 2025000, 10000);
    CHECK(at.trained_ms == Approx(2000000));
    CHECK(at.cut_write_ms == Approx(5000));
    CHECK(at.persistent_ms == Approx(1000000));
    CHECK(at.memory_ms == Approx(1800000));
  }
  SECTION("an attempt resuming between persistent checkpoints") {
    // Resumed 3 snapshots after the job's last persistent checkpoint: the
    // attempt persists after its 2nd snapshot, then every 5th.
    plan.snapshots_since_persistent = 3;
    CHECK(AttemptDurationMs(plan, 3000000) == 123000 + 3000000 + 14000 + 30000);
    // 462 s of training wall time: two cycles, the persistent write, 50 s.
    const ResumePoints at = ResumePointsAt(plan, 123000 + 462000, 10000);
    CHECK(at.trained_ms == Approx(450000));
    CHECK(at.writing_ms == Approx(12000));
    CHECK(at.persistent_ms == Approx(400000));
    CHECK(at.memory_ms == Approx(400000));
    CHECK(at.memory_since_persistent == 0);
  }
  SECTION("persistent checkpoints at whole snapshot intervals") {
    plan.memory_interval_ms = 300000;
    CHECK(plan.PersistentEvery() == 3);  // 3.33 rounded
    plan.memory_interval_ms = 2000000;
    CHECK(plan.PersistentEvery() == 1);  // rarer snapshots: every one
  }
}

// Two leaves of two nodes (0-1, 2-3), the spares under a third; snapshots
// every 300 s of training (1 s to write, replicated in 10 s, restored in
// 10 s), persistent checkpoints every hour (every 12th snapshot).
GoodputConfig MemoryConfig() {
  GoodputConfig c = Config();
  c.cluster.nodes_per_leaf = 2;
  c.memory_interval_s = 300;
  c.memory_write_s = 1;
  c.memory_replicate_s = 10;
  c.memory_restore_s = 10;
  return c;
}

TEST_CASE("gantry+memory: a lost node restores from its peer's memory") {
  const GoodputReport r = Run(MemoryConfig(), Policy("gantry+memory", 2),
                              {Hardware(2 * kHour, {0})});
  // Training from 103 s; at 7,200 s, 7,097 s later: one period (12 x 301 +
  // 10 = 3,622 s), 11 cycles (3,311 s) and 164 s. Snapshot 23 was written
  // at 23 x 301 + 10 = 6,933 s and replicated: 6,900 s of training kept,
  // 164 s lost. Node 0's copy is gone, its peer (node 2) has it. Restart at
  // 7,203 s: 3 + 100 + 10 s, then 29,100 s of work with 96 snapshots and 8
  // persistent writes (176 s): ends at 36,592 s.
  const TimeSplit& s = Split(r);
  CHECK(r.restarts == 1);
  CHECK(r.memory_restores == 1);
  CHECK(r.memory_fallbacks == 0);
  CHECK(s[GoodputKind::kLost] == Approx(164));
  CHECK(s[GoodputKind::kRecovering] == Approx(113));
  CHECK(s[GoodputKind::kCheckpoint] == Approx(33 + 176));
  CHECK(r.outcomes.front().end_ms == 36592 * 1000);
  CHECK(r.Ettr() == Approx(36000.0 / 36592));
  // The same failure without the tier loses the 3,487 s since the hourly
  // checkpoint.
  const GoodputReport plain =
      Run(MemoryConfig(), Policy("gantry", 2), {Hardware(2 * kHour, {0})});
  CHECK(Split(plain)[GoodputKind::kLost] == Approx(3487));
  CHECK(plain.memory_restores + plain.memory_fallbacks == 0);
}

TEST_CASE("gantry+memory: lost work is bounded by interval and replication") {
  // Whenever a single node fails, its peer holds a snapshot at most one
  // interval, one write and one replication old.
  const GoodputConfig config = MemoryConfig();
  const double bound = config.memory_interval_s + config.memory_write_s +
                       config.memory_replicate_s;
  // From the first snapshot's replication (103 + 301 + 10 s) on.
  for (int64_t t = 414 * 1000; t < 3 * kHour; t += 37 * 1000) {
    const uint32_t node = static_cast<uint32_t>(t / 1000 % 4);
    const GoodputReport r =
        Run(config, Policy("gantry+memory", 2), {Hardware(t, {node})});
    INFO("failure at " << t / 1000 << " s on node " << node);
    CHECK(Split(r)[GoodputKind::kLost] <= bound);
    CHECK(r.memory_restores == 1);
    CHECK(Split(r)[GoodputKind::kProductive] == Approx(36000));
  }
}

TEST_CASE("gantry+memory: a snapshot still replicating does not protect") {
  // Snapshot 23 was written at 7,036 s (see above); 5 s later its copy is
  // not on node 2 yet: back to snapshot 22 (written at 6,735 s), losing the
  // 300 s of training between them and the 5 s since (6,905 - 6,600 s;
  // the finished write stays checkpoint time).
  const GoodputReport r =
      Run(MemoryConfig(), Policy("gantry+memory", 2), {Hardware(7041000, {0})});
  CHECK(r.memory_restores == 1);
  CHECK(Split(r)[GoodputKind::kLost] == Approx(305));
  // Once replicated (at 7,046 s), snapshot 23 protects: 10 s lost.
  const GoodputReport after =
      Run(MemoryConfig(), Policy("gantry+memory", 2), {Hardware(7046000, {0})});
  CHECK(Split(after)[GoodputKind::kLost] == Approx(10));
}

TEST_CASE("gantry+memory: a node and its peer together fall back") {
  // Node 0's copies were on node 0 and node 2. Back to the hourly
  // checkpoint (3,600 s): 3,464 s lost, 164 of them at the failure and the
  // 3,300 s the snapshot had kept. Restart: 3 + 100 + 50 s (load), then
  // 32,400 s of work with 107 snapshots and 8 persistent writes (187 s):
  // ends at 39,943 s.
  auto check = [](const GoodputReport& r) {
    const TimeSplit& s = Split(r);
    CHECK(r.restarts == 1);
    CHECK(r.memory_restores == 0);
    CHECK(r.memory_fallbacks == 1);
    CHECK(s[GoodputKind::kLost] == Approx(3464));
    CHECK(s[GoodputKind::kProductive] == Approx(36000));
    CHECK(s[GoodputKind::kRecovering] == Approx(153));
    CHECK(r.outcomes.front().end_ms == 39943 * 1000);
  };
  SECTION("at once") {
    check(Run(MemoryConfig(), Policy("gantry+memory", 2),
              {Hardware(2 * kHour, {0, 2})}));
  }
  SECTION("the peer while the restart waits") {
    check(Run(MemoryConfig(), Policy("gantry+memory", 2),
              {Hardware(2 * kHour, {0}), Hardware(2 * kHour + 2000, {2})}));
  }
}

TEST_CASE(
    "gantry+memory: a repaired peer holds nothing older than its return") {
  // One spare (node 4, its own leaf): the peer of nodes 2 and 3. It fails
  // idle at 1 h and is back at 2 h with empty memory. Node 2 fails at
  // 7,300 s: its newest replicated snapshot, 23, was written at 103 + 23 x
  // 301 + 10 = 7,036 s, before node 4 came back: back to the hourly
  // checkpoint, losing the 7,164 - 3,600 s trained since.
  GoodputConfig config = MemoryConfig();
  const GoodputReport r = Run(config, Policy("gantry+memory", 1),
                              {Hardware(kHour, {4}), Hardware(7300000, {2})});
  CHECK(r.memory_fallbacks == 1);
  CHECK(Split(r)[GoodputKind::kLost] == Approx(3564));
  CHECK(Split(r)[GoodputKind::kProductive] == Approx(36000));
  // At 7,400 s (7,297 s of training wall time: two periods and 53 s),
  // snapshot 24, written at 103 + 24 x 301 + 10 = 7,337 s and persisted
  // with it, is on node 4 since its return: restored from memory, 53 s
  // lost.
  const GoodputReport later =
      Run(config, Policy("gantry+memory", 1),
          {Hardware(kHour, {4}), Hardware(7400000, {2})});
  CHECK(later.memory_restores == 1);
  CHECK(later.memory_fallbacks == 0);
  CHECK(Split(later)[GoodputKind::kLost] == Approx(53));
}

TEST_CASE("gantry+memory: short attempts still persist on the job's grid") {
  // No spares; rank crashes at 2,400 s and 4,800 s restore from local
  // memory, then nodes 0 and 2 (a node and its peer) fail at 7,200 s.
  // Attempt 1 (training from 103 s) keeps snapshot 7 (2,100 s), losing
  // 190 s. Attempt 2 (training from 2,513 s) starts 7 snapshots into the
  // hour: it persists after its 5th (1,500 s), and keeps snapshot 7 at the
  // crash, losing 170 s. Attempt 3 (from 4,913 s) keeps its snapshot 7
  // too, but both copies of node 0's are gone: back to attempt 2's
  // persistent checkpoint, losing 180 s and the 600 + 2,100 s kept since.
  // Had each attempt counted the hour from its start, none would have
  // persisted and the fallback would go back to the job's start.
  FailureEvent crash = Hardware(2400000, {3});
  crash.fault = FaultClass::kSoftware;
  FailureEvent second = Hardware(4800000, {1});
  second.fault = FaultClass::kSoftware;
  const GoodputReport r = Run(MemoryConfig(), Policy("gantry+memory", 0),
                              {crash, second, Hardware(7200000, {0, 2})});
  CHECK(r.restarts == 3);
  CHECK(r.memory_restores == 2);
  CHECK(r.memory_fallbacks == 1);
  CHECK(Split(r)[GoodputKind::kLost] == Approx(190 + 170 + 180 + 600 + 2100));
  CHECK(Split(r)[GoodputKind::kProductive] == Approx(36000));
}

TEST_CASE("gantry+memory: a leaf failure still restores from memory") {
  // Nodes 0 and 1 (leaf 0) at once: their peers 2 and 3 hold the copies.
  const GoodputReport r = Run(MemoryConfig(), Policy("gantry+memory", 2),
                              {Hardware(2 * kHour, {0, 1})});
  CHECK(r.memory_restores == 1);
  CHECK(r.memory_fallbacks == 0);
  CHECK(Split(r)[GoodputKind::kLost] == Approx(164));
  CHECK(r.outcomes.front().end_ms == 36592 * 1000);
}

TEST_CASE("gantry+memory: the auto interval is Young/Daly's") {
  // 0.25 failures per node-hour on 4 nodes: M = 3,600 s; write 1 s.
  GoodputConfig config = MemoryConfig();
  config.auto_memory_interval_node_rate_per_hour = 0.25;
  const double m = 3600, cost = 1;
  const double x = cost / (2 * m);
  const double tau =
      std::sqrt(2 * cost * m) * (1 + std::sqrt(x) / 3 + x / 9) - cost;
  REQUIRE(tau == Approx(84.18).epsilon(1e-3));
  // No failure: 36,000 s of work with a snapshot after each whole interval
  // and a persistent write every round(3,600 / tau) = 43rd.
  const double snapshots = std::ceil(36000 / tau) - 1;
  const double persisted = std::floor(snapshots / std::round(3600 / tau));
  const GoodputReport r = Run(config, Policy("gantry+memory", 2), {});
  CHECK(r.outcomes.front().end_ms ==
        std::llround((103 + 36000 + snapshots * cost + persisted * 10) * 1000));
  CHECK(Split(r)[GoodputKind::kCheckpoint] ==
        Approx(snapshots * cost + persisted * 10));
}

TEST_CASE("Bad settings are refused") {
  GoodputConfig config = Config();
  config.checkpoint_interval_s = 0;
  ListFailureSource none({});
  CHECK(SimulateGoodput(OneJob(), config, Policy("gantry", 0), none)
            .status()
            .code() == absl::StatusCode::kInvalidArgument);
  config = Config();
  config.bad_after_repair = 2;
  CHECK_FALSE(
      SimulateGoodput(OneJob(), config, Policy("gantry", 0), none).ok());
  auto refused = [&](const GoodputConfig& bad) {
    const absl::Status status =
        SimulateGoodput(OneJob(), bad, Policy("gantry+memory", 0), none)
            .status();
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    return std::string(status.message());
  };
  config = Config();
  config.memory_interval_s = 0;
  CHECK(refused(config) == "--memory-interval must be > 0");
  config.memory_interval_s = NAN;
  CHECK(refused(config) == "--memory-interval must be > 0");
  for (double GoodputConfig::*field :
       {&GoodputConfig::memory_write_s, &GoodputConfig::memory_replicate_s,
        &GoodputConfig::memory_restore_s}) {
    config = Config();
    config.*field = -1;
    CHECK(refused(config).starts_with("--memory-write, --memory-replicate"));
  }
}

}  // namespace goodput_sim_test
}  // namespace gantry::sim
