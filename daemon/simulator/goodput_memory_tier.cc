// In-memory checkpoints held by peers, the second checkpoint tier of the
// goodput engine (goodput_engine.h): which state a failed attempt resumes
// from, and whether the restart can restore it from memory or has to fall
// back to the file system.
//
// A failure keeps the newest snapshot replicated before it (goodput_attempt
// ResumePointsAt). Whether its copies survive is decided when the restart
// is placed, not at the failure: a node failing while the restart waits
// (the peer of a node already lost, say) can still take the last copy.
// Nodes failing later, during the restart's launch and init before the
// load, are not counted (a window of about two minutes).
#include <algorithm>

#include "daemon/scheduler/checkpoint_interval.h"
#include "daemon/simulator/goodput_engine.h"

namespace gantry::sim::goodput_engine {

double Engine::MemoryIntervalS(uint32_t nodes) const {
  const double rate = config_.auto_memory_interval_node_rate_per_hour;
  if (rate <= 0 || nodes == 0) return config_.memory_interval_s;
  return OptimalCheckpointIntervalSeconds(config_.memory_write_s,
                                          3600 / (rate * nodes))
      .value_or(config_.memory_interval_s);
}

void Engine::Persisted(JobState& s) {
  s.snapshot = MemorySnapshotRef{};
  s.snapshots_since_persistent = 0;
  s.unpersisted_productive_ms = 0;
  s.unpersisted_degraded_ms = 0;
}

double Engine::AccountJobFailure(JobState& s, double elapsed_ms,
                                 double jit_lost_ms) {
  if (!policy_.memory_checkpoints) {
    return AccountFailed(s.plan, elapsed_ms, s.work_left_ms, jit_lost_ms,
                         s.outcome.split);
  }
  const ResumePoints at =
      ResumePointsAt(s.plan, elapsed_ms, config_.memory_replicate_s * 1000);
  double kept = at.persistent_ms;
  bool from_memory = false;
  if (jit_lost_ms >= 0) {
    // A save at the failure goes to the file system and is newer than
    // any snapshot.
    kept = std::max(kept, at.trained_ms - jit_lost_ms);
  } else if (at.memory_ms > 0 && at.memory_ms >= kept) {
    // At a persistent checkpoint's boundary the snapshot is as new and
    // faster to restore.
    kept = at.memory_ms;
    from_memory = true;
  }
  const double work_ms = s.work_left_ms;
  const double saved =
      AccountFailedFrom(s.plan, at, elapsed_ms, kept, work_ms, s.outcome.split);
  if (from_memory) {
    if (at.persistent_ms > 0) Persisted(s);
    const double persisted = std::min(work_ms, at.persistent_ms * s.plan.speed);
    s.unpersisted_productive_ms += saved - persisted;
    s.unpersisted_degraded_ms +=
        (kept - saved) - (at.persistent_ms - persisted);
    s.snapshots_since_persistent = at.memory_since_persistent;
    s.snapshot.valid = true;
    s.snapshot.written_ms = s.attempt_start_ms + Ms(at.memory_written_ms);
    s.snapshot.holders.clear();
    for (const NodeShare& share : s.shares) {
      s.snapshot.holders.push_back(static_cast<uint32_t>(share.node.index()));
    }
  } else if (kept > 0) {
    Persisted(s);
  }
  // Nothing kept: the attempt saved nothing newer than the state it started
  // from, so the restart resumes from that one as this attempt did.
  return saved;
}

bool Engine::SnapshotSurvives(const MemorySnapshotRef& snapshot) const {
  if (!snapshot.valid) return false;
  auto holds_copy = [&](uint32_t n) {
    return !node_state_[n].down &&
           node_state_[n].up_since_ms <= snapshot.written_ms;
  };
  return std::all_of(
      snapshot.holders.begin(), snapshot.holders.end(), [&](uint32_t n) {
        return holds_copy(n) || holds_copy(MemoryPeerOf(shape_, n));
      });
}

void Engine::ChooseRestore(JobState& s, bool count) {
  if (!policy_.memory_checkpoints) {
    s.plan.load_ms = config_.load_s * 1000;
    return;
  }
  if (SnapshotSurvives(s.snapshot)) {
    s.plan.load_ms = config_.memory_restore_s * 1000;
    if (count) ++s.outcome.memory_restores;
    return;
  }
  // The training since the persistent checkpoint was counted kept at the
  // failure; without the snapshot it is redone.
  TimeSplit& split = s.outcome.split;
  split[GoodputKind::kProductive] -= s.unpersisted_productive_ms / 1000;
  split[GoodputKind::kDegraded] -= s.unpersisted_degraded_ms / 1000;
  split[GoodputKind::kLost] +=
      (s.unpersisted_productive_ms + s.unpersisted_degraded_ms) / 1000;
  s.work_left_ms += s.unpersisted_productive_ms;
  Persisted(s);
  s.plan.load_ms = config_.load_s * 1000;
  if (count) ++s.outcome.memory_fallbacks;
}

}  // namespace gantry::sim::goodput_engine
