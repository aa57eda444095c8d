#include "daemon/simulator/goodput_sim.h"

#include <algorithm>
#include <cmath>
#include <queue>
#include <random>

#include "daemon/scheduler/priority.h"
#include "daemon/scheduler/scheduler.h"

namespace gantry::sim {
namespace {

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
  bool evicted = false;        // kueue: back of the queue, no spares
  int64_t queue_time_ms = 0;   // submit time used for the queue order
  int64_t since_ms = 0;        // start of the current down/pending stretch
  // The current attempt.
  int64_t attempt_start_ms = 0;
  AttemptPlan plan;
  std::vector<NodeShare> shares;
  GoodputJobOutcome outcome;
};

struct NodeState {
  bool down = false;
  bool bad = false;  // fails soon after ranks start; pre-flight may catch it
  std::vector<std::size_t> jobs;  // job indices holding part of it
};

class Engine {
 public:
  Engine(const std::vector<GoodputJob>& jobs, const GoodputConfig& config,
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
      s.outcome.gpus =
          s.gang.nodes * std::max<uint32_t>(1, s.gang.gpus_per_node);
      jobs_.push_back(std::move(s));
    }
    report_.jobs = static_cast<int>(jobs_.size());
  }

  GoodputReport Run() {
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
        last_submit +
        std::max<int64_t>(kMinHorizonMs, kHorizonFactor * longest);
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
  bool AnyGpuFree() const {
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
  bool Handle(const Event& e, int64_t now) {
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

  // grow_at_once: a shrunk job in training, with enough whole nodes free
  // (spares left for failures) to be whole again, writes a checkpoint and
  // goes back to the queue as a restart.
  void GrowShrunkJobs(int64_t now) {
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
      s.outcome.split.checkpoint_s += config_.checkpoint_write_s;
      ++s.outcome.grows;
      s.phase = Phase::kDown;
      s.restart = true;
      s.trained = true;
      ++s.gen;
      s.since_ms = now + Ms(config_.checkpoint_write_s * 1000);
      Push(s.since_ms, EventType::kReady, j, s.gen);
    }
  }

  void TakeDown(uint32_t n, int64_t now) {
    NodeState& node = node_state_[n];
    if (node.down) return;
    node.down = true;
    node.bad = false;
    nodes_[n].schedulable = false;
    Push(now + Ms(config_.repair_s * 1000), EventType::kNodeBack, 0, 0, n);
  }

  void ApplyFailure(const FailureEvent& failure, int64_t now) {
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
  bool FreeNodeToSwap() const {
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      if (!node_state_[i].down && node_state_[i].jobs.empty()) return true;
    }
    return false;
  }

  void JobFailed(std::size_t j, const FailureEvent& failure, uint32_t nodes_hit,
                 int64_t now) {
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
    s.work_left_ms -=
        AccountFailed(s.plan, elapsed, s.work_left_ms, jit, s.outcome.split);
    s.phase = Phase::kDown;
    s.restart = true;
    s.after_failure = true;
    s.since_ms = now;
    ++s.gen;
    double detect_s = policy_.detect_s;
    if (failure.fault == FaultClass::kSoftware) detect_s = 0;
    if (failure.fault == FaultClass::kHang) detect_s = config_.hang_detect_s;
    s.outcome.split.detecting_s += detect_s;
    int64_t ready = now + Ms(detect_s * 1000);
    if (policy_.jit_checkpoint && !in_setup) {
      s.outcome.split.recovering_s += policy_.jit_save_s;
      ready += Ms(policy_.jit_save_s * 1000);
    }
    switch (policy_.kind) {
      case RecoveryKind::kGantry:
        break;
      case RecoveryKind::kSlurm:
        s.outcome.split.queued_s += policy_.operator_delay_s;
        ready += Ms(policy_.operator_delay_s * 1000);
        break;
      case RecoveryKind::kKueue: {
        // A second failure during a swap (the attempt had not started
        // training yet), several nodes at once, or no spare to swap in.
        const bool need_spare = failure.fault == FaultClass::kHardware;
        const bool restarting = s.plan.first ? false : in_setup;
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
  void Evict(JobState& s, int64_t now) {
    if (s.evicted && s.phase == Phase::kDown) return;
    ++s.outcome.evictions;
    s.evicted = true;
    ++s.gen;
    const std::size_t j = static_cast<std::size_t>(&s - jobs_.data());
    const int64_t ready =
        std::max(now, s.since_ms) + Ms(policy_.requeue_backoff_s * 1000);
    s.outcome.split.queued_s +=
        static_cast<double>(ready - std::max(now, s.since_ms)) / 1000.0;
    s.since_ms = ready;
    Push(ready, EventType::kReady, j, s.gen);
  }

  void BecomePending(JobState& s, int64_t now) {
    s.phase = Phase::kPending;
    s.since_ms = now;
    if (s.evicted) s.queue_time_ms = now;
  }

  void Release(std::size_t j) {
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
  uint32_t WholeFreeNodes() const {
    uint32_t count = 0;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      if (nodes_[i].schedulable &&
          nodes_[i].free_gpus.size() == nodes_[i].gpus_total) {
        ++count;
      }
    }
    return count;
  }

  void ScheduleNow(int64_t now) {
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
  int64_t ExpectedEndMs(const JobState& s, int64_t now) const {
    const double factor = config_.time_limit_factor;
    if (s.phase == Phase::kRunning) {
      return std::max(
          now + 1, s.attempt_start_ms +
                       Ms(AttemptDurationMs(s.plan, s.work_left_ms) * factor));
    }
    return now + 1 + Ms(s.work_left_ms * factor);
  }

  void StartAttempt(std::size_t j, std::vector<NodeShare> shares, int64_t now) {
    JobState& s = jobs_[j];
    // Before any training there is no checkpoint to load, and the time is
    // the job's start (a pre-flight swap included).
    const bool first = !s.trained;
    if (s.outcome.first_start_ms < 0) {
      s.outcome.first_start_ms = now;
    } else {
      s.outcome.split.queued_s +=
          static_cast<double>(now - s.since_ms) / 1000.0;
    }
    if (s.after_failure) ++s.outcome.restarts;
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
    s.plan.load_ms = first ? 0 : config_.load_s * 1000;
    s.plan.interval_ms = config_.checkpoint_interval_s * 1000;
    s.plan.write_ms = config_.checkpoint_write_s * 1000;
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
    Push(now + Ms(AttemptDurationMs(s.plan, s.work_left_ms)),
         EventType::kJobEnd, j, s.gen);
  }

  void Summarize() {
    for (const JobState& s : jobs_) {
      report_.outcomes.push_back(s.outcome);
      const GoodputJobOutcome& o = s.outcome;
      report_.restarts += o.restarts;
      report_.evictions += o.evictions;
      report_.preflight_catches += o.preflight_catches;
      report_.shrunk_attempts += o.shrunk_attempts;
      report_.grows += o.grows;
      if (o.end_ms < 0) continue;
      ++report_.jobs_finished;
      report_.split.Add(o.split, o.gpus);
    }
  }

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

}  // namespace

std::vector<RecoveryPolicy> StandardRecoveryPolicies(uint32_t spares) {
  // Gantry: --node-timeout 3 s (its default) to notice a lost node; about
  // 3 s from a node's death to every rank running again (README, "When
  // things fail"). Pre-flight: 10 s per attempt (the issue's target for 64
  // nodes), catching 90% of bad nodes (an assumption).
  RecoveryPolicy gantry{.name = "gantry",
                        .kind = RecoveryKind::kGantry,
                        .detect_s = 3,
                        .launch_s = 3,
                        .spares = spares,
                        .shrink = true,
                        .preflight_s = 10,
                        .preflight_catch = 0.9};
  RecoveryPolicy jit = gantry;
  jit.name = "gantry+jit";
  jit.jit_checkpoint = true;
  jit.jit_save_s = 60;  // write the state from the surviving replicas
  jit.jit_lost_s = 10;  // the step in flight
  // Slurm: a dead node is noticed after SlurmdTimeout (300 s by default);
  // an operator resumes nodes and requeues the job after 30 min (assumed);
  // 10 s to launch (assumed).
  RecoveryPolicy slurm{.name = "slurm",
                       .kind = RecoveryKind::kSlurm,
                       .detect_s = 300,
                       .launch_s = 10,
                       .spares = 0,
                       .operator_delay_s = 1800};
  // Kueue: a node is NotReady after the node monitor's grace period (40 s);
  // pods rescheduled and started in 30 s (assumed); an evicted workload is
  // re-admitted after waitForPodsReady's requeuing backoff base, 60 s.
  RecoveryPolicy kueue{.name = "kueue",
                       .kind = RecoveryKind::kKueue,
                       .detect_s = 40,
                       .launch_s = 30,
                       .spares = spares,
                       .requeue_backoff_s = 60};
  return {gantry, jit, slurm, kueue};
}

ClusterShape ClusterWithSpares(const ClusterShape& shape,
                               const RecoveryPolicy& policy) {
  ClusterShape with = shape;
  with.nodes += policy.spares;
  return with;
}

absl::Status ValidateGoodputConfig(const GoodputConfig& c,
                                   const RecoveryPolicy& p) {
  if (absl::Status status = ValidateShape(c.cluster); !status.ok()) {
    return status;
  }
  auto nonneg = [](double v) { return v >= 0 && std::isfinite(v); };
  if (!(c.checkpoint_interval_s > 0) ||
      !std::isfinite(c.checkpoint_interval_s)) {
    return absl::InvalidArgumentError("--checkpoint-interval must be > 0");
  }
  for (double v :
       {c.checkpoint_write_s, c.init_s, c.load_s, c.hang_detect_s, c.repair_s,
        c.bad_fail_after_s, c.time_limit_factor, p.detect_s, p.launch_s,
        p.operator_delay_s, p.requeue_backoff_s, p.preflight_s, p.jit_save_s,
        p.jit_lost_s}) {
    if (!nonneg(v)) {
      return absl::InvalidArgumentError(
          "times and factors must be finite and >= 0");
    }
  }
  for (double share :
       {c.bad_after_repair, c.min_nodes_fraction, p.preflight_catch}) {
    if (!(share >= 0 && share <= 1)) {
      return absl::InvalidArgumentError(
          "shares (--bad-after-repair, --min-nodes-fraction, "
          "--preflight-catch) must be in [0, 1]");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<GoodputReport> SimulateGoodput(
    const std::vector<GoodputJob>& jobs, const GoodputConfig& config,
    const RecoveryPolicy& policy, FailureSource& failures) {
  if (absl::Status status = ValidateGoodputConfig(config, policy);
      !status.ok()) {
    return status;
  }
  Engine engine(jobs, config, policy, failures);
  return engine.Run();
}

}  // namespace gantry::sim
