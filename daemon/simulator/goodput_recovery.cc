// What a failure does to the jobs it hits under each recovery policy,
// and the nodes it takes out: the failure half of the goodput engine
// (goodput_engine.h).
#include <algorithm>

#include "daemon/simulator/goodput_engine.h"

namespace gantry::sim::goodput_engine {

// grow_at_once: a shrunk job in training, with enough whole nodes free
// (spares left for failures) to be whole again, writes a checkpoint and
// goes back to the queue as a restart.
void Engine::GrowShrunkJobs(int64_t now) {
  uint32_t free = 0;
  for (uint32_t i = 0; i < config_.cluster.nodes; ++i) {
    if (nodes_[i].schedulable &&
        nodes_[i].free_gpus.size() == nodes_[i].gpus_total) {
      ++free;
    }
  }
  for (std::size_t j = 0; j < jobs_.size() && free > 0; ++j) {
    JobState& s = jobs_[j];
    const uint32_t used = static_cast<uint32_t>(s.shares.size());
    if (s.phase != Phase::kRunning || used >= s.gang.nodes ||
        used + free < s.gang.nodes ||
        static_cast<double>(now - s.attempt_start_ms) < s.plan.SetupMs()) {
      continue;
    }
    free -= s.gang.nodes - used;
    // Nothing is lost: the state is saved at a step boundary.
    s.work_left_ms -=
        AccountFailed(s.plan, static_cast<double>(now - s.attempt_start_ms),
                      s.work_left_ms, 0, s.outcome.split);
    s.outcome.split[GoodputKind::kCheckpoint] += config_.checkpoint_write_s;
    Persisted(s);
    ++s.outcome.grows;
    s.phase = Phase::kDown;
    s.restart = true;
    s.trained = true;
    ++s.gen;
    s.since_ms = now + Ms(config_.checkpoint_write_s * 1000);
    Push(s.since_ms, EventType::kReady, j, s.gen);
  }
}

void Engine::TakeDown(uint32_t n, int64_t now) {
  NodeState& node = node_state_[n];
  if (node.down) return;
  node.down = true;
  node.bad = false;
  nodes_[n].schedulable = false;
  Push(now + Ms(config_.repair_s * 1000), EventType::kNodeBack, 0, 0, n);
}

void Engine::ApplyFailure(const FailureEvent& failure, int64_t now) {
  // Jobs hit, each once however many of its nodes the event took.
  std::vector<std::size_t> hit;
  for (uint32_t n : failure.nodes) {
    if (n >= node_state_.size() || node_state_[n].down) continue;
    for (std::size_t j : node_state_[n].jobs) {
      if (std::find(hit.begin(), hit.end(), j) == hit.end()) hit.push_back(j);
    }
  }
  for (std::size_t j : hit) {
    uint32_t count = 0;
    for (uint32_t n : failure.nodes) {
      if (n < node_state_.size() && !node_state_[n].down &&
          std::find(node_state_[n].jobs.begin(), node_state_[n].jobs.end(),
                    j) != node_state_[n].jobs.end()) {
        ++count;
      }
    }
    JobFailed(j, failure, count, now);
  }
  if (failure.fault == FaultClass::kHardware) {
    for (uint32_t n : failure.nodes) {
      if (n < node_state_.size()) TakeDown(n, now);
    }
  }
}

// Whether a whole node is up and idle for Kueue to swap in: a spare, or
// any other node (a repaired one is back in the pool like any other).
bool Engine::FreeNodeToSwap() const {
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (!node_state_[i].down && node_state_[i].jobs.empty()) return true;
  }
  return false;
}

void Engine::JobFailed(std::size_t j, const FailureEvent& failure,
                       uint32_t nodes_hit, int64_t now) {
  JobState& s = jobs_[j];
  ++s.outcome.failures;
  ++report_.job_failures;
  const bool kueue = policy_.kind == RecoveryKind::kKueue;
  if (s.phase == Phase::kDown) {
    // Noticed already and being recovered: Gantry's restart simply leaves
    // this node out too; Kueue evicts on a second failure.
    if (kueue) Evict(s, now);
    return;
  }
  if (s.phase != Phase::kRunning) return;
  const double elapsed = static_cast<double>(now - s.attempt_start_ms);
  const bool in_setup = elapsed < s.plan.SetupMs();
  if (!in_setup) s.trained = true;
  const double jit = policy_.jit_checkpoint ? policy_.jit_lost_s * 1000 : -1;
  s.work_left_ms -= AccountJobFailure(s, elapsed, jit);
  s.phase = Phase::kDown;
  s.restart = true;
  s.after_failure = true;
  s.since_ms = now;
  ++s.gen;
  double detect_s = policy_.detect_s;
  if (failure.fault == FaultClass::kSoftware) detect_s = 0;
  if (failure.fault == FaultClass::kHang) detect_s = config_.hang_detect_s;
  s.outcome.split[GoodputKind::kDetecting] += detect_s;
  int64_t ready = now + Ms(detect_s * 1000);
  if (policy_.jit_checkpoint && !in_setup) {
    s.outcome.split[GoodputKind::kRecovering] += policy_.jit_save_s;
    ready += Ms(policy_.jit_save_s * 1000);
  }
  switch (policy_.kind) {
    case RecoveryKind::kGantry:
      break;
    case RecoveryKind::kSlurm:
      s.outcome.split[GoodputKind::kQueued] += policy_.operator_delay_s;
      ready += Ms(policy_.operator_delay_s * 1000);
      break;
    case RecoveryKind::kKueue: {
      // A second failure during a swap (the restarted attempt had not
      // started training yet), several nodes at once, or no node to swap
      // in.
      const bool need_spare = failure.fault == FaultClass::kHardware;
      const bool restarting = s.swap_attempt && in_setup;
      if (restarting || nodes_hit > 1 || (need_spare && !FreeNodeToSwap())) {
        s.since_ms = ready;
        Evict(s, now);
        return;
      }
      break;
    }
  }
  s.since_ms = ready;
  Push(ready, EventType::kReady, j, s.gen);
}

// Kueue: the whole job back to the end of the queue after the backoff.
void Engine::Evict(JobState& s, int64_t now) {
  if (s.evicted && s.phase == Phase::kDown) return;
  ++s.outcome.evictions;
  s.evicted = true;
  ++s.gen;
  const std::size_t j = static_cast<std::size_t>(&s - jobs_.data());
  const int64_t ready =
      std::max(now, s.since_ms) + Ms(policy_.requeue_backoff_s * 1000);
  s.outcome.split[GoodputKind::kQueued] +=
      static_cast<double>(ready - std::max(now, s.since_ms)) / 1000.0;
  s.since_ms = ready;
  Push(ready, EventType::kReady, j, s.gen);
}

void Engine::BecomePending(JobState& s, int64_t now) {
  s.phase = Phase::kPending;
  s.since_ms = now;
  if (s.evicted) s.queue_time_ms = now;
}

}  // namespace gantry::sim::goodput_engine
