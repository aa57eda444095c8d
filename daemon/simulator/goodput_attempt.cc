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
  split.preflight_s += preflight;
  if (plan.first) {
    split.starting_s += launch + init + load;
  } else {
    split.recovering_s += launch + init + load;
  }
}

// Checkpoint writes during `train_ms` of training that ends the job.
double WritesBefore(const AttemptPlan& plan, double train_ms) {
  if (train_ms <= 0) return 0;
  return std::max(0.0, std::ceil(train_ms / plan.interval_ms) - 1);
}

}  // namespace

double TimeSplit::Wall() const {
  return productive_s + degraded_s + checkpoint_s + lost_s + detecting_s +
         recovering_s + preflight_s + queued_s + starting_s;
}

double TimeSplit::Ettr() const {
  const double wall = Wall();
  return wall > 0 ? productive_s / wall : 0;
}

void TimeSplit::Add(const TimeSplit& o, double weight) {
  productive_s += o.productive_s * weight;
  degraded_s += o.degraded_s * weight;
  checkpoint_s += o.checkpoint_s * weight;
  lost_s += o.lost_s * weight;
  detecting_s += o.detecting_s * weight;
  recovering_s += o.recovering_s * weight;
  preflight_s += o.preflight_s * weight;
  queued_s += o.queued_s * weight;
  starting_s += o.starting_s * weight;
}

double AttemptDurationMs(const AttemptPlan& plan, double work_ms) {
  const double train_ms = work_ms / plan.speed;
  return plan.SetupMs() + train_ms +
         WritesBefore(plan, train_ms) * plan.write_ms;
}

void AccountFinished(const AttemptPlan& plan, double work_ms,
                     TimeSplit& split) {
  AccountSetup(plan, plan.SetupMs(), split);
  const double train_ms = work_ms / plan.speed;
  split.productive_s += work_ms / 1000.0;
  split.degraded_s += (train_ms - work_ms) / 1000.0;
  split.checkpoint_s += WritesBefore(plan, train_ms) * plan.write_ms / 1000.0;
}

double AccountFailed(const AttemptPlan& plan, double elapsed_ms, double work_ms,
                     double jit_lost_ms, TimeSplit& split) {
  AccountSetup(plan, elapsed_ms, split);
  const double trained_wall = std::max(0.0, elapsed_ms - plan.SetupMs());
  if (trained_wall <= 0) return 0;
  const double cycle = plan.interval_ms + plan.write_ms;
  const double cycles = std::floor(trained_wall / cycle);
  const double rest = trained_wall - cycles * cycle;
  // Training since the last finished checkpoint, and a write cut short.
  const double unsaved = std::min(rest, plan.interval_ms);
  const double cut_write = rest - unsaved;
  double kept_train = cycles * plan.interval_ms;
  double lost = unsaved + cut_write;
  if (jit_lost_ms >= 0) {
    const double thrown = std::min(unsaved, jit_lost_ms);
    kept_train += unsaved - thrown;
    lost = thrown + cut_write;
  }
  const double saved = std::min(work_ms, kept_train * plan.speed);
  split.productive_s += saved / 1000.0;
  split.degraded_s += (kept_train - saved) / 1000.0;
  split.checkpoint_s += cycles * plan.write_ms / 1000.0;
  split.lost_s += lost / 1000.0;
  return saved;
}

}  // namespace gantry::sim
