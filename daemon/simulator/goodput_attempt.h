// The time accounting of one job attempt in gantry-sim's goodput runs: how
// long an attempt needs for the work left, and where its time went when it
// finished or failed. Pure; thread-safe.
//
// An attempt: launch, pre-flight, init, checkpoint load (restarts only),
// then training in cycles of checkpoint_interval of training and one
// checkpoint write. Running shrunk (speed < 1, the share of the job's full
// size it runs on) makes training count that share as productive and the
// rest as "degraded"; checkpoints keep their wall-clock interval.
//
// With in-memory snapshots (memory_interval_ms > 0) training stops every
// memory interval for the snapshot's write, and the persistent checkpoint
// is taken at a snapshot boundary: every PersistentEvery()-th snapshot of
// the job is followed by the file system write. One grid for both tiers
// keeps the schedule in closed form, and is what a training loop counting
// steps does; the grid is the job's, not the attempt's: an attempt that
// resumed from a snapshot persists after the snapshots missing to the next
// multiple (snapshots_since_persistent), not a whole interval later, or
// short attempts would never persist.
#pragma once

#include <array>
#include <cstddef>

#include "common/goodput_kinds.h"

namespace gantry::sim {

// Where a job's wall time went, in seconds (or GPU-seconds when summed
// GPU-weighted), by the kinds gantryd measures too (common/goodput_kinds.h),
// with the model's own two: degraded (running shrunk: the missing share of
// the time) and checkpoint (periodic checkpoint and snapshot writes). Lost
// is the work since the last usable checkpoint, redone; detecting, failure
// to noticed; recovering, noticed to training again (launch, init, load);
// queued, after a failure, waiting for nodes or an operator; starting, the
// first attempt's launch and init. Wall = the sum of all parts.
struct TimeSplit {
  std::array<double, kGoodputKinds> seconds{};

  double& operator[](GoodputKind kind) {
    return seconds[static_cast<size_t>(kind)];
  }
  double operator[](GoodputKind kind) const {
    return seconds[static_cast<size_t>(kind)];
  }
  double Wall() const;
  double Ettr() const;  // productive / wall; 0 for no time
  void Add(const TimeSplit& other, double weight);
};

struct AttemptPlan {
  double launch_ms = 0;
  double preflight_ms = 0;
  double init_ms = 0;
  double load_ms = 0;  // 0 on the first attempt
  bool first = true;
  double interval_ms = 1;  // persistent checkpoint interval (> 0)
  double write_ms = 0;
  // In-memory snapshots: training between two (0: none) and the blocking
  // copy of the state to host memory.
  double memory_interval_ms = 0;
  double memory_write_ms = 0;
  // Snapshots the job wrote since its newest persistent checkpoint, before
  // this attempt (below PersistentEvery()).
  double snapshots_since_persistent = 0;
  double speed = 1;  // (0, 1]

  double SetupMs() const {
    return launch_ms + preflight_ms + init_ms + load_ms;
  }
  // Snapshots per persistent checkpoint: the persistent interval rounded
  // to whole memory intervals, at least 1 (then every snapshot is also
  // persisted). 1 without snapshots.
  double PersistentEvery() const;
};

// Where an attempt that failed `elapsed_ms` after placement stands: the
// training it did and what each checkpoint tier saved of it. Training and
// saved amounts are wall-clock training ms of this attempt (at plan.speed).
struct ResumePoints {
  double trained_ms = 0;     // training done, writes excluded
  double writing_ms = 0;     // finished writes of both tiers
  double cut_write_ms = 0;   // a write the failure cut short
  double persistent_ms = 0;  // saved by the newest persistent checkpoint
  // The newest snapshot whose write and replication (`replicate_ms` after
  // the write) both ended before the failure: the training it saved and
  // when its write ended, ms after placement. -1: none (or no snapshots).
  double memory_ms = -1;
  double memory_written_ms = -1;
  // At that snapshot, the job's snapshots since its newest persistent
  // checkpoint (an attempt resuming from it starts there on the grid).
  double memory_since_persistent = 0;
};
ResumePoints ResumePointsAt(const AttemptPlan& plan, double elapsed_ms,
                            double replicate_ms);

// Wall time from the attempt's placement to its end for `work_ms` of work
// at full size: setup, training at plan.speed, and a checkpoint after each
// whole interval except at the very end.
double AttemptDurationMs(const AttemptPlan& plan, double work_ms);

// An attempt that ran to the end: adds its time to `split`.
void AccountFinished(const AttemptPlan& plan, double work_ms, TimeSplit& split);

// An attempt that failed `elapsed_ms` after placement (before its end) with
// `work_ms` of work left at its start. Without just-in-time checkpointing
// (jit_lost_ms < 0) the work since the last finished persistent checkpoint
// is lost (and a write cut short with it; snapshots are the engine's to
// weigh, with AccountFailedFrom); with it, only min(that,
// jit_lost_ms). Adds the time to `split`; returns the work saved (full-size
// ms), which the next attempt no longer needs.
double AccountFailed(const AttemptPlan& plan, double elapsed_ms, double work_ms,
                     double jit_lost_ms, TimeSplit& split);

// The same, resuming from `kept_train_ms` of the attempt's training (at
// most at.trained_ms): whatever saved it (a persistent checkpoint, a
// snapshot, a save at the failure), the rest of the training and a write
// cut short are lost. Returns the work saved (full-size ms).
double AccountFailedFrom(const AttemptPlan& plan, const ResumePoints& at,
                         double elapsed_ms, double kept_train_ms,
                         double work_ms, TimeSplit& split);

}  // namespace gantry::sim
