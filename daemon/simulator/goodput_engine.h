// The goodput engine behind SimulateGoodput (goodput_sim.h): its events,
// per-job and per-node state and the Engine that runs them. Internal to
// gantry-sim: goodput_engine.cc has the event loop, placement and attempts,
// goodput_recovery.cc what a failure does under each policy,
// goodput_memory_tier.cc the in-memory snapshots a restart may restore
// from. Not thread-safe (one Engine per run).
#pragma once

#include <cstdint>
#include <queue>
#include <random>
#include <vector>

#include "daemon/scheduler/priority.h"
#include "daemon/scheduler/scheduler.h"
#include "daemon/simulator/goodput_sim.h"

namespace gantry::sim::goodput_engine {

constexpr int64_t kMinHorizonMs = 365LL * 86400 * 1000;
constexpr int64_t kHorizonFactor = 100;

enum class EventType {
  kJobEnd,         // an attempt finished its work
  kNodeBack,       // a repaired node returns
  kFailure,        // the failure source's next event
  kLatentFailure,  // a bad node that started ranks unnoticed fails
  kPreflightFail,  // pre-flight caught a bad node
  kReady,          // a failed job may be placed again
  kSubmit,
};

struct Event {
  int64_t time_ms = 0;
  EventType type = EventType::kSubmit;
  std::size_t job = 0;
  uint64_t gen = 0;  // the job's generation it was made for
  uint32_t node = 0;
  uint64_t seq = 0;
  bool operator>(const Event& o) const {
    if (time_ms != o.time_ms) return time_ms > o.time_ms;
    if (type != o.type) return type > o.type;
    return seq > o.seq;
  }
};

enum class Phase { kUnsubmitted, kPending, kRunning, kDown, kDone };

// The in-memory snapshot a job's next restart would restore: each rank's
// copy is on the node that wrote it and on that node's peer
// (MemoryPeerOf), and is gone from a node whose memory was wiped (a
// hardware fault) after the write ended.
struct MemorySnapshotRef {
  bool valid = false;
  int64_t written_ms = 0;
  std::vector<uint32_t> holders;  // the nodes of the attempt that wrote it
};

struct JobState {
  const GoodputJob* job = nullptr;
  GangShape gang;
  uint32_t min_nodes = 0;
  Phase phase = Phase::kUnsubmitted;
  uint64_t gen = 0;
  double work_left_ms = 0;
  bool restart = false;        // the next attempt is a restart
  bool trained = false;        // an attempt got as far as training
  bool after_failure = false;  // the next start is a restart after one
  bool swap_attempt = false;   // the current attempt is such a restart
  bool evicted = false;        // kueue: back of the queue, no spares
  int64_t queue_time_ms = 0;   // submit time used for the queue order
  int64_t since_ms = 0;        // start of the current down/pending stretch
  // The current attempt.
  int64_t attempt_start_ms = 0;
  AttemptPlan plan;
  std::vector<NodeShare> shares;
  // memory_checkpoints: where the next restart resumes from when the
  // snapshot survives, and the training kept beyond the newest persistent
  // checkpoint on the strength of snapshots (productive and degraded ms),
  // lost if the restart has to fall back.
  MemorySnapshotRef snapshot;
  // Where the restart stands on the persistent grid (AttemptPlan).
  double snapshots_since_persistent = 0;
  double unpersisted_productive_ms = 0;
  double unpersisted_degraded_ms = 0;
  GoodputJobOutcome outcome;
};

struct NodeState {
  bool down = false;
  // Back from its last repair (0: up from the start): the host memory, and
  // the snapshots in it, are new since then.
  int64_t up_since_ms = 0;
  bool bad = false;  // fails soon after ranks start; pre-flight may catch it
  std::vector<std::size_t> jobs;  // job indices holding part of it
};

class Engine {
 public:
  Engine(const std::vector<GoodputJob>& jobs, const GoodputConfig& config,
         const RecoveryPolicy& policy, FailureSource& failures);

  GoodputReport Run();

 private:
  void Push(int64_t t, EventType type, std::size_t job, uint64_t gen,
            uint32_t node = 0) {
    events_.push({t, type, job, gen, node, seq_++});
  }
  static int64_t Ms(double ms) {
    return static_cast<int64_t>(std::llround(ms));
  }
  void PullFailure() {
    next_failure_ = failures_.Next();
    if (next_failure_.time_ms != INT64_MAX) {
      Push(next_failure_.time_ms, EventType::kFailure, 0, 0);
    }
  }
  // Whether a pending job could use a free GPU: hot spares count only for
  // restarts (they take nothing else).
  bool AnyGpuFree() const;
  // Returns true when a job finished.
  bool Handle(const Event& e, int64_t now);
  // grow_at_once: a shrunk job in training, with enough whole nodes free
  // (spares left for failures) to be whole again, writes a checkpoint and
  // goes back to the queue as a restart.
  void GrowShrunkJobs(int64_t now);
  void TakeDown(uint32_t n, int64_t now);
  void ApplyFailure(const FailureEvent& failure, int64_t now);
  // Whether a whole node is up and idle for Kueue to swap in: a spare, or
  // any other node (a repaired one is back in the pool like any other).
  bool FreeNodeToSwap() const;
  void JobFailed(std::size_t j, const FailureEvent& failure, uint32_t nodes_hit,
                 int64_t now);
  // Kueue: the whole job back to the end of the queue after the backoff.
  void Evict(JobState& s, int64_t now);
  void BecomePending(JobState& s, int64_t now);
  void Release(std::size_t j);
  // Nodes with every GPU free and up: what a shrinking job could use.
  uint32_t WholeFreeNodes() const;
  void ScheduleNow(int64_t now);
  // When backfill expects the job to end: its attempt's run time scaled
  // like a user's time limit; a failed job holding its nodes until its
  // restart is expected to need them for the rest of its work.
  int64_t ExpectedEndMs(const JobState& s, int64_t now) const;
  void StartAttempt(std::size_t j, std::vector<NodeShare> shares, int64_t now);
  void Summarize();
  // Training seconds between checkpoints for an attempt on `nodes` nodes.
  double CheckpointIntervalS(uint32_t nodes) const;

  // The in-memory tier (goodput_memory_tier.cc); without memory_checkpoints
  // it is the persistent checkpoint alone.
  // Training seconds between snapshots for an attempt on `nodes` nodes.
  double MemoryIntervalS(uint32_t nodes) const;
  // Accounts job `s`'s failed attempt, `elapsed_ms` after its placement,
  // resuming from the newest of its persistent checkpoint, a just-in-time
  // save (jit_lost_ms >= 0) and its newest replicated snapshot, and
  // remembers that snapshot for the restart. Returns the work saved.
  double AccountJobFailure(JobState& s, double elapsed_ms, double jit_lost_ms);
  // Whether every rank's copy of `snapshot` is still on its node or peer.
  bool SnapshotSurvives(const MemorySnapshotRef& snapshot) const;
  // Before an attempt that loads a checkpoint: from memory if the snapshot
  // survives, else from the file system with the work since the persistent
  // checkpoint lost. Sets s.plan.load_ms; counts it when `count` (a
  // restart after a failure).
  void ChooseRestore(JobState& s, bool count);
  // A persistent checkpoint covers all the job kept: no snapshot needed.
  static void Persisted(JobState& s);

  const GoodputConfig& config_;
  const RecoveryPolicy& policy_;
  ClusterShape shape_;
  FailureSource& failures_;
  FailureEvent next_failure_;
  std::mt19937_64 rng_;
  std::vector<NodeSnapshot> nodes_;
  std::vector<NodeState> node_state_;
  std::vector<JobState> jobs_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  uint64_t seq_ = 0;
  bool dirty_ = false;  // something happened that may let a job start
  FairShare fair_share_;
  GoodputReport report_;
};

}  // namespace gantry::sim::goodput_engine
