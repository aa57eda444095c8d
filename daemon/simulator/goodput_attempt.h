// The time accounting of one job attempt in gantry-sim's goodput runs: how
// long an attempt needs for the work left, and where its time went when it
// finished or failed. Pure; thread-safe.
//
// An attempt: launch, pre-flight, init, checkpoint load (restarts only),
// then training in cycles of checkpoint_interval of training and one
// checkpoint write. Running shrunk (speed < 1, the share of the job's full
// size it runs on) makes training count that share as productive and the
// rest as "degraded"; checkpoints keep their wall-clock interval.
#pragma once

namespace gantry::sim {

// Where a job's wall time went, in seconds (or GPU-seconds when summed
// GPU-weighted). Wall = the sum of all parts.
struct TimeSplit {
  double productive_s = 0;
  double degraded_s = 0;    // running shrunk: the missing share of the time
  double checkpoint_s = 0;  // periodic checkpoint writes
  double lost_s = 0;        // work since the last checkpoint, thrown away
  double detecting_s = 0;   // failure to noticed
  double recovering_s = 0;  // noticed to training again (launch, init, load)
  double preflight_s = 0;
  double queued_s = 0;    // after a failure, waiting for nodes/an operator
  double starting_s = 0;  // the first attempt's launch and init

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
  double interval_ms = 1;  // checkpoint interval (> 0)
  double write_ms = 0;
  double speed = 1;  // (0, 1]

  double SetupMs() const {
    return launch_ms + preflight_ms + init_ms + load_ms;
  }
};

// Wall time from the attempt's placement to its end for `work_ms` of work
// at full size: setup, training at plan.speed, and a checkpoint after each
// whole interval except at the very end.
double AttemptDurationMs(const AttemptPlan& plan, double work_ms);

// An attempt that ran to the end: adds its time to `split`.
void AccountFinished(const AttemptPlan& plan, double work_ms, TimeSplit& split);

// An attempt that failed `elapsed_ms` after placement (before its end) with
// `work_ms` of work left at its start. Without just-in-time checkpointing
// (jit_lost_ms < 0) the work since the last finished checkpoint is lost
// (and a checkpoint write cut short with it); with it, only min(that,
// jit_lost_ms). Adds the time to `split`; returns the work saved (full-size
// ms), which the next attempt no longer needs.
double AccountFailed(const AttemptPlan& plan, double elapsed_ms, double work_ms,
                     double jit_lost_ms, TimeSplit& split);

}  // namespace gantry::sim
