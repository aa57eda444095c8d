#include "daemon/simulator/goodput_engine.h"

#include <algorithm>
#include <cmath>

#include "daemon/scheduler/checkpoint_interval.h"

namespace gantry::sim::goodput_engine {

double Engine::CheckpointIntervalS(uint32_t nodes) const {
  const double rate = config_.auto_interval_node_rate_per_hour;
  if (rate <= 0 || nodes == 0) return config_.checkpoint_interval_s;
  return OptimalCheckpointIntervalSeconds(config_.checkpoint_write_s,
                                          3600 / (rate * nodes))
      .value_or(config_.checkpoint_interval_s);
}

Engine::Engine(const std::vector<GoodputJob>& jobs, const GoodputConfig& config,
               const RecoveryPolicy& policy, FailureSource& failures)
    : config_(config),
      policy_(policy),
      shape_(ClusterWithSpares(config.cluster, policy)),
      failures_(failures),
      rng_(config.seed ^ 0x9e3779b97f4a7c15ULL),
      nodes_(BuildNodes(shape_)),
      node_state_(shape_.nodes) {
  for (uint32_t i = config.cluster.nodes; i < shape_.nodes; ++i) {
    nodes_[i].hot_spare = true;
  }
  for (uint32_t n : config.bad_nodes) {
    if (n < node_state_.size()) node_state_[n].bad = true;
  }
  report_.policy = policy.name;
  for (const GoodputJob& job : jobs) {
    JobState s;
    s.job = &job;
    s.gang = GangFor(job.gpus, shape_);
    if (s.gang.nodes > config.cluster.nodes) {
      ++report_.jobs_never_fit;
      continue;
    }
    s.min_nodes = s.gang.nodes;
    if (s.gang.nodes > 1 && config.min_nodes_fraction > 0) {
      s.min_nodes = std::max<uint32_t>(
          1, static_cast<uint32_t>(
                 std::ceil(s.gang.nodes * config.min_nodes_fraction)));
    }
    s.work_left_ms = static_cast<double>(job.work_ms);
    s.queue_time_ms = job.submit_ms;
    s.outcome.id = job.id;
    s.outcome.nodes = s.gang.nodes;
    s.outcome.gpus = s.gang.nodes * std::max<uint32_t>(1, s.gang.gpus_per_node);
    jobs_.push_back(std::move(s));
  }
  report_.jobs = static_cast<int>(jobs_.size());
}

GoodputReport Engine::Run() {
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    Push(jobs_[j].job->submit_ms, EventType::kSubmit, j, 0);
  }
  PullFailure();
  // A model where jobs can never finish (every repaired node bad and
  // always caught, say) would run for ever: stop long after any job
  // could have ended; the ones left count as unfinished.
  int64_t last_submit = 0, longest = 0;
  for (const JobState& s : jobs_) {
    last_submit = std::max(last_submit, s.job->submit_ms);
    longest = std::max(longest, s.job->work_ms);
  }
  const int64_t horizon =
      last_submit + std::max<int64_t>(kMinHorizonMs, kHorizonFactor * longest);
  std::size_t done = 0;
  while (done < jobs_.size() && !events_.empty() &&
         events_.top().time_ms <= horizon) {
    const int64_t now = events_.top().time_ms;
    while (!events_.empty() && events_.top().time_ms == now) {
      const Event e = events_.top();
      events_.pop();
      if (Handle(e, now)) ++done;
    }
    // Only a job to place or resources freed can start anything.
    if (dirty_ && policy_.grow_at_once) GrowShrunkJobs(now);
    if (done < jobs_.size() && dirty_ && AnyGpuFree()) ScheduleNow(now);
    dirty_ = false;
  }
  Summarize();
  return std::move(report_);
}

// Whether a pending job could use a free GPU: hot spares count only for
// restarts (they take nothing else).
bool Engine::AnyGpuFree() const {
  bool spare_free = false;
  for (const NodeSnapshot& node : nodes_) {
    if (!node.schedulable || node.free_gpus.empty()) continue;
    if (!node.hot_spare) return true;
    spare_free = true;
  }
  if (!spare_free) return false;
  return std::any_of(jobs_.begin(), jobs_.end(), [](const JobState& s) {
    return s.phase == Phase::kPending && s.restart;
  });
}

// Returns true when a job finished.
bool Engine::Handle(const Event& e, int64_t now) {
  // Failures only take resources away (a failed job's nodes are freed at
  // its kReady); everything else may let a job start.
  if (e.type != EventType::kFailure && e.type != EventType::kLatentFailure) {
    dirty_ = true;
  }
  switch (e.type) {
    case EventType::kSubmit: {
      JobState& s = jobs_[e.job];
      s.phase = Phase::kPending;
      return false;
    }
    case EventType::kJobEnd: {
      JobState& s = jobs_[e.job];
      if (s.gen != e.gen || s.phase != Phase::kRunning) return false;
      AccountFinished(s.plan, s.work_left_ms, s.outcome.split);
      s.work_left_ms = 0;
      s.outcome.end_ms = now;
      Release(e.job);
      s.phase = Phase::kDone;
      ++s.gen;
      return true;
    }
    case EventType::kNodeBack: {
      NodeState& n = node_state_[e.node];
      n.down = false;
      n.up_since_ms = now;
      nodes_[e.node].schedulable = true;
      n.bad = config_.bad_after_repair > 0 &&
              std::uniform_real_distribution<double>(0, 1)(rng_) <
                  config_.bad_after_repair;
      return false;
    }
    case EventType::kFailure: {
      const FailureEvent failure = next_failure_;
      ++report_.failure_events;
      PullFailure();
      ApplyFailure(failure, now);
      return false;
    }
    case EventType::kLatentFailure: {
      JobState& s = jobs_[e.job];
      if (s.gen != e.gen || s.phase != Phase::kRunning) return false;
      FailureEvent failure;
      failure.time_ms = now;
      failure.nodes = {e.node};
      failure.kind = "bad node after repair";
      ApplyFailure(failure, now);
      return false;
    }
    case EventType::kPreflightFail: {
      JobState& s = jobs_[e.job];
      if (s.gen != e.gen || s.phase != Phase::kRunning) return false;
      // The attempt ends before ranks start: no failure, no lost work.
      AccountFailed(s.plan, static_cast<double>(now - s.attempt_start_ms),
                    s.work_left_ms, -1, s.outcome.split);
      for (const NodeShare& share : s.shares) {
        const uint32_t n = static_cast<uint32_t>(share.node.index());
        if (node_state_[n].bad) {
          ++s.outcome.preflight_catches;
          TakeDown(n, now);
        }
      }
      Release(e.job);
      // Placed again like a restart (spares first), with no failure.
      s.restart = true;
      BecomePending(s, now);
      return false;
    }
    case EventType::kReady: {
      JobState& s = jobs_[e.job];
      if (s.gen != e.gen || s.phase != Phase::kDown) return false;
      Release(e.job);
      BecomePending(s, now);
      return false;
    }
  }
  return false;
}

void Engine::Release(std::size_t j) {
  JobState& s = jobs_[j];
  for (const NodeShare& share : s.shares) {
    NodeSnapshot& node = nodes_[share.node.index()];
    node.cpus_free += share.cpus;
    node.free_gpus.insert(node.free_gpus.end(), share.gpus.begin(),
                          share.gpus.end());
    std::sort(node.free_gpus.begin(), node.free_gpus.end());
    std::erase(node_state_[share.node.index()].jobs, j);
  }
  s.shares.clear();
}

// Nodes with every GPU free and up: what a shrinking job could use.
uint32_t Engine::WholeFreeNodes() const {
  uint32_t count = 0;
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].schedulable &&
        nodes_[i].free_gpus.size() == nodes_[i].gpus_total) {
      ++count;
    }
  }
  return count;
}

void Engine::ScheduleNow(int64_t now) {
  std::vector<PendingJob> pending;
  std::vector<RunningJob> running;
  const uint32_t whole_free = WholeFreeNodes();
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    const JobState& s = jobs_[j];
    if (s.phase == Phase::kRunning || s.phase == Phase::kDown) {
      running.push_back({.id = JobId(j + 1),
                         .shares = s.shares,
                         .expected_end_ms = ExpectedEndMs(s, now)});
    }
    if (s.phase != Phase::kPending) continue;
    PendingJob p;
    p.id = JobId(j + 1);
    p.partition = kPartition;
    p.nodes = s.gang.nodes;
    if (policy_.shrink && s.restart && s.min_nodes < s.gang.nodes) {
      p.nodes = std::clamp(whole_free, s.min_nodes, s.gang.nodes);
    }
    p.gpus_per_node = s.gang.gpus_per_node;
    p.max_tasks_per_node = std::max<uint32_t>(1, s.gang.gpus_per_node);
    p.cpus_per_task = 1;
    p.user = s.job->user;
    p.submit_time_ms = s.queue_time_ms;
    // Kueue's evicted job is admitted afresh (queue order from now), on
    // any free node.
    p.is_restart = s.restart;
    p.time_limit_ms = std::max<int64_t>(
        1, Ms(s.work_left_ms * config_.time_limit_factor +
              1000 * (config_.init_s + config_.load_s + policy_.launch_s)));
    pending.push_back(std::move(p));
  }
  if (pending.empty()) return;
  OrderQueue(pending, fair_share_, PriorityWeights{}, now);
  SchedulerOptions options;
  options.now_ms = now;
  ScheduleResult result = Schedule(nodes_, pending, running, options);
  for (JobStart& start : result.starts) {
    StartAttempt(static_cast<std::size_t>(start.job_id.value() - 1),
                 std::move(start.shares), now);
  }
}

// When backfill expects the job to end: its attempt's run time scaled
// like a user's time limit; a failed job holding its nodes until its
// restart is expected to need them for the rest of its work.
int64_t Engine::ExpectedEndMs(const JobState& s, int64_t now) const {
  const double factor = config_.time_limit_factor;
  if (s.phase == Phase::kRunning) {
    return std::max(now + 1,
                    s.attempt_start_ms +
                        Ms(AttemptDurationMs(s.plan, s.work_left_ms) * factor));
  }
  return now + 1 + Ms(s.work_left_ms * factor);
}

void Engine::StartAttempt(std::size_t j, std::vector<NodeShare> shares,
                          int64_t now) {
  JobState& s = jobs_[j];
  // Before any training there is no checkpoint to load, and the time is
  // the job's start (a pre-flight swap included).
  const bool first = !s.trained;
  if (s.outcome.first_start_ms < 0) {
    s.outcome.first_start_ms = now;
  } else {
    s.outcome.split[GoodputKind::kQueued] +=
        static_cast<double>(now - s.since_ms) / 1000.0;
  }
  if (s.after_failure) ++s.outcome.restarts;
  s.swap_attempt = s.after_failure;
  s.after_failure = false;
  s.evicted = false;
  s.phase = Phase::kRunning;
  ++s.gen;
  s.attempt_start_ms = now;
  s.shares = std::move(shares);
  const uint32_t used = static_cast<uint32_t>(s.shares.size());
  s.plan = AttemptPlan{};
  s.plan.first = first;
  s.plan.launch_ms = policy_.launch_s * 1000;
  s.plan.preflight_ms = policy_.preflight_s * 1000;
  s.plan.init_ms =
      first && !config_.init_first_attempt ? 0 : config_.init_s * 1000;
  s.plan.interval_ms = CheckpointIntervalS(used) * 1000;
  s.plan.write_ms = config_.checkpoint_write_s * 1000;
  if (policy_.memory_checkpoints) {
    s.plan.memory_interval_ms = MemoryIntervalS(used) * 1000;
    s.plan.memory_write_ms = config_.memory_write_s * 1000;
  }
  // Before the fair-share charge and the end time: a fallback adds work.
  if (!first) ChooseRestore(s, s.swap_attempt);
  s.plan.snapshots_since_persistent = s.snapshots_since_persistent;
  s.plan.speed = static_cast<double>(used) / s.gang.nodes;
  if (used < s.gang.nodes) ++s.outcome.shrunk_attempts;
  std::vector<uint32_t> bad;
  for (const NodeShare& share : s.shares) {
    const uint32_t n = static_cast<uint32_t>(share.node.index());
    NodeSnapshot& node = nodes_[n];
    node.cpus_free -= share.cpus;
    std::erase_if(node.free_gpus, [&](uint32_t g) {
      return std::find(share.gpus.begin(), share.gpus.end(), g) !=
             share.gpus.end();
    });
    node_state_[n].jobs.push_back(j);
    if (node_state_[n].bad) bad.push_back(n);
  }
  fair_share_.AddUsage(s.job->user, s.outcome.gpus * s.work_left_ms / 1000.0,
                       now);
  // Pre-flight runs after launch, before the ranks.
  bool caught = false;
  if (policy_.preflight_s > 0) {
    for (uint32_t n : bad) {
      (void)n;
      if (std::uniform_real_distribution<double>(0, 1)(rng_) <
          policy_.preflight_catch) {
        caught = true;
      }
    }
  }
  if (caught) {
    Push(now + Ms(s.plan.launch_ms + s.plan.preflight_ms),
         EventType::kPreflightFail, j, s.gen);
    return;
  }
  if (!bad.empty()) {
    Push(now + Ms(s.plan.SetupMs() + config_.bad_fail_after_s * 1000),
         EventType::kLatentFailure, j, s.gen, bad.front());
  }
  Push(now + Ms(AttemptDurationMs(s.plan, s.work_left_ms)), EventType::kJobEnd,
       j, s.gen);
}

void Engine::Summarize() {
  for (const JobState& s : jobs_) {
    report_.outcomes.push_back(s.outcome);
    const GoodputJobOutcome& o = s.outcome;
    report_.restarts += o.restarts;
    report_.evictions += o.evictions;
    report_.preflight_catches += o.preflight_catches;
    report_.shrunk_attempts += o.shrunk_attempts;
    report_.grows += o.grows;
    report_.memory_restores += o.memory_restores;
    report_.memory_fallbacks += o.memory_fallbacks;
    if (o.end_ms < 0) continue;
    ++report_.jobs_finished;
    report_.split.Add(o.split, o.gpus);
  }
}

}  // namespace gantry::sim::goodput_engine
