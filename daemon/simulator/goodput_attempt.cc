#include "daemon/simulator/goodput_attempt.h"

#include <algorithm>
#include <cmath>

namespace gantry::sim {
namespace {

// The part of the setup that `elapsed_ms` covers, in order: launch,
// pre-flight, init, load.
void AccountSetup(const AttemptPlan& plan, double elapsed_ms,
                  TimeSplit& split) {
  double left = std::max(0.0, elapsed_ms);
  auto take = [&](double part) {
    const double used = std::min(left, part);
    left -= used;
    return used / 1000.0;
  };
  const double launch = take(plan.launch_ms);
  const double preflight = take(plan.preflight_ms);
  const double init = take(plan.init_ms);
  const double load = take(plan.load_ms);
  split[GoodputKind::kPreflight] += preflight;
  if (plan.first) {
    split[GoodputKind::kStarting] += launch + init + load;
  } else {
    split[GoodputKind::kRecovering] += launch + init + load;
  }
}

// The grid training stops on: a snapshot every `interval_ms` of training
// (without the memory tier, the persistent checkpoint is the snapshot and
// the snapshot's own write costs nothing), the persistent write after
// every `every`-th of the job. The attempt starts `offset` snapshots into
// a persistent period: positions on the grid are counted from that
// period's start (`offset` cycles of no write of this attempt's before).
struct WriteGrid {
  double interval_ms;
  double snapshot_write_ms;
  double every;
  double persistent_write_ms;
  double offset;

  explicit WriteGrid(const AttemptPlan& plan)
      : interval_ms(plan.memory_interval_ms > 0 ? plan.memory_interval_ms
                                                : plan.interval_ms),
        snapshot_write_ms(plan.memory_interval_ms > 0 ? plan.memory_write_ms
                                                      : 0),
        every(plan.PersistentEvery()),
        persistent_write_ms(plan.write_ms),
        offset(plan.memory_interval_ms > 0
                   ? std::clamp(std::round(plan.snapshots_since_persistent),
                                0.0, every - 1)
                   : 0) {}
  double CycleMs() const { return interval_ms + snapshot_write_ms; }
  // Training wall time before the attempt on the period's clock.
  double OffsetMs() const { return offset * CycleMs(); }
  // When the attempt's snapshot `j` (from 1) finished writing, ms of its
  // training wall time: its cycles and the persistent writes at the
  // boundaries before it.
  double SnapshotWrittenMs(double j) const {
    return j * CycleMs() +
           std::floor((offset + j - 1) / every) * persistent_write_ms;
  }
};

// Time spent writing during `train_ms` of training that ends the job: at
// every boundary crossed, not at the very end.
double WritingBeforeMs(const AttemptPlan& plan, double train_ms) {
  if (train_ms <= 0) return 0;
  const WriteGrid grid(plan);
  const double boundaries =
      std::max(0.0, std::ceil(train_ms / grid.interval_ms) - 1);
  return boundaries * grid.snapshot_write_ms +
         std::floor((grid.offset + boundaries) / grid.every) *
             grid.persistent_write_ms;
}

}  // namespace

double TimeSplit::Wall() const {
  // In the order the parts were always added, so the figures stay the same
  // to the last bit.
  double wall = 0;
  for (GoodputKind kind :
       {GoodputKind::kProductive, GoodputKind::kDegraded,
        GoodputKind::kCheckpoint, GoodputKind::kLost, GoodputKind::kDetecting,
        GoodputKind::kRecovering, GoodputKind::kPreflight, GoodputKind::kQueued,
        GoodputKind::kStarting}) {
    wall += (*this)[kind];
  }
  return wall;
}

double TimeSplit::Ettr() const {
  const double wall = Wall();
  return wall > 0 ? (*this)[GoodputKind::kProductive] / wall : 0;
}

void TimeSplit::Add(const TimeSplit& o, double weight) {
  for (size_t i = 0; i < kGoodputKinds; ++i) {
    seconds[i] += o.seconds[i] * weight;
  }
}

double AttemptPlan::PersistentEvery() const {
  if (memory_interval_ms <= 0) return 1;
  return std::max(1.0, std::round(interval_ms / memory_interval_ms));
}

double AttemptDurationMs(const AttemptPlan& plan, double work_ms) {
  const double train_ms = work_ms / plan.speed;
  return plan.SetupMs() + train_ms + WritingBeforeMs(plan, train_ms);
}

void AccountFinished(const AttemptPlan& plan, double work_ms,
                     TimeSplit& split) {
  AccountSetup(plan, plan.SetupMs(), split);
  const double train_ms = work_ms / plan.speed;
  split[GoodputKind::kProductive] += work_ms / 1000.0;
  split[GoodputKind::kDegraded] += (train_ms - work_ms) / 1000.0;
  split[GoodputKind::kCheckpoint] += WritingBeforeMs(plan, train_ms) / 1000.0;
}

ResumePoints ResumePointsAt(const AttemptPlan& plan, double elapsed_ms,
                            double replicate_ms) {
  ResumePoints at;
  const double trained_wall = elapsed_ms - plan.SetupMs();
  if (trained_wall <= 0) return at;
  const WriteGrid grid(plan);
  // Whole persistent periods, then the snapshot cycles of the one cut
  // short, on the period's clock.
  const double period = grid.every * grid.CycleMs() + grid.persistent_write_ms;
  const double on_grid = trained_wall + grid.OffsetMs();
  const double periods = std::floor(on_grid / period);
  const double rest = on_grid - periods * period;
  double cycles = std::floor(rest / grid.CycleMs());
  double unsaved = 0;
  if (cycles >= grid.every) {
    cycles = grid.every;
    at.cut_write_ms = rest - cycles * grid.CycleMs();  // the persistent write
  } else {
    const double in_cycle = rest - cycles * grid.CycleMs();
    unsaved = std::min(in_cycle, grid.interval_ms);
    at.cut_write_ms = in_cycle - unsaved;  // the snapshot's write
  }
  const double snapshots = periods * grid.every + cycles - grid.offset;
  at.trained_ms = snapshots * grid.interval_ms + unsaved;
  at.writing_ms =
      snapshots * grid.snapshot_write_ms + periods * grid.persistent_write_ms;
  if (periods >= 1) {
    at.persistent_ms = (periods * grid.every - grid.offset) * grid.interval_ms;
  }
  if (plan.memory_interval_ms <= 0) return at;
  // A snapshot protects only once its copy is on the peer: step back over
  // the ones still replicating (a few when replication outlasts a cycle).
  double newest = snapshots;
  while (newest >= 1 &&
         grid.SnapshotWrittenMs(newest) + replicate_ms > trained_wall) {
    --newest;
  }
  if (newest >= 1) {
    at.memory_ms = newest * grid.interval_ms;
    at.memory_written_ms = plan.SetupMs() + grid.SnapshotWrittenMs(newest);
    // Persisted with it only if that write finished too; else the next
    // snapshot's boundary persists. (Older than the newest persistent
    // checkpoint, the snapshot is not the one to resume from.)
    at.memory_since_persistent = std::clamp(
        grid.offset + newest - periods * grid.every, 0.0, grid.every - 1);
  }
  return at;
}

double AccountFailedFrom(const AttemptPlan& plan, const ResumePoints& at,
                         double elapsed_ms, double kept_train_ms,
                         double work_ms, TimeSplit& split) {
  AccountSetup(plan, elapsed_ms, split);
  const double kept = std::clamp(kept_train_ms, 0.0, at.trained_ms);
  const double saved = std::min(work_ms, kept * plan.speed);
  split[GoodputKind::kProductive] += saved / 1000.0;
  split[GoodputKind::kDegraded] += (kept - saved) / 1000.0;
  split[GoodputKind::kCheckpoint] += at.writing_ms / 1000.0;
  split[GoodputKind::kLost] +=
      (at.trained_ms - kept + at.cut_write_ms) / 1000.0;
  return saved;
}

double AccountFailed(const AttemptPlan& plan, double elapsed_ms, double work_ms,
                     double jit_lost_ms, TimeSplit& split) {
  const ResumePoints at = ResumePointsAt(plan, elapsed_ms, 0);
  double kept = at.persistent_ms;
  if (jit_lost_ms >= 0) {
    kept = std::max(kept, at.trained_ms - jit_lost_ms);
  }
  return AccountFailedFrom(plan, at, elapsed_ms, kept, work_ms, split);
}

}  // namespace gantry::sim
