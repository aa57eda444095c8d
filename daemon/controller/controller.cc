// Controller: construction, loading the state at start, and stopping.
// controller.h maps the other concerns to their files.
#include "daemon/controller/controller.h"

#include <algorithm>
#include <cstdlib>
#include <random>

#include <boost/asio/post.hpp>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "daemon/controller/controller_metrics.h"
#include "daemon/launch/step_layout.h"

namespace gantry {

namespace {

// Each census walks every node; once a second is fresh enough for any
// scrape.
constexpr uint64_t kTicksPerNodeCensus = 4;

// Node and GPU gauges from the node table.
void PublishNodeMetrics(const ClusterState& state, ControllerMetrics& metrics) {
  NodeCensus census;
  for (const auto& [name, node] : state.nodes) {
    census.Add(ClassifyNode(node.record.state(), node.record.drained(),
                            node.record.health_problems().empty()),
               static_cast<uint32_t>(node.record.inventory().gpus_size()),
               static_cast<uint32_t>(node.usage.gpus.size()));
  }
  metrics.PublishNodes(census);
}

// No partitions given: one "main" of every node. The partitions' hot
// spares join the global set (being a spare is a property of the node).
ControllerOptions WithPartitionDefaults(ControllerOptions options) {
  if (options.partitions.empty()) {
    PartitionConfig main;
    main.name = "main";
    main.is_default = true;
    options.partitions.push_back(std::move(main));
  }
  for (const PartitionConfig& partition : options.partitions) {
    options.hot_spares.insert(partition.hot_spares.begin(),
                              partition.hot_spares.end());
  }
  return options;
}

}  // namespace

Controller::Controller(boost::asio::io_context& io, StateStore& store,
                       const Clock& clock, ControllerOptions options)
    : io_(io),
      store_(store),
      clock_(clock),
      options_(WithPartitionDefaults(std::move(options))),
      tick_(io, clock, kTickInterval,
            [this](uint64_t tick, int64_t late_ms) { Tick(tick, late_ms); }),
      commits_(io, store, clock, options_.metrics,
               {.find_job = [this](uint64_t id) -> const v1::JobRecord* {
                  auto it = state_.jobs.find(id);
                  return it == state_.jobs.end() ? nullptr : &it->second.record;
                },
                .find_node =
                    [this](const std::string& name) -> const v1::NodeRecord* {
                  auto it = state_.nodes.find(name);
                  return it == state_.nodes.end() ? nullptr
                                                  : &it->second.record;
                },
                .on_job_staged =
                    [this](const v1::JobRecord& record) {
                      for (const auto& feature : features_) {
                        feature->OnJobChanged(record);
                      }
                    },
                .on_event_staged =
                    [this](const v1::EventRecord& event) {
                      node_events_.Observe(event);
                    }}),
      passes_(io, clock,
              {.may_act = options_.may_act,
               .run_pass =
                   [this] {
                     scheduling_.Run();
                     for (const auto& feature : features_) {
                       feature->AfterSchedulingPass();
                     }
                   },
               .pass_done =
                   [this](int64_t duration_ns) {
                     statistics_.SchedulingPass(duration_ns, clock_.NowMs());
                     if (options_.metrics) {
                       options_.metrics->ObserveSchedulingPass(
                           static_cast<double>(duration_ns) / 1e9);
                     }
                   }}),
      switch_tree_(clock, options_, state_, commits_),
      utilization_(io, clock, state_),
      allocation_liveness_(options_.inactive_limit_ms),
      lifecycle_({.io = io,
                  .store = store,
                  .clock = clock,
                  .options = options_,
                  .state = state_,
                  .commits = commits_,
                  .passes = passes_,
                  .statistics = statistics_,
                  .allocation_liveness = allocation_liveness_,
                  .features = features_},
                 {.end_open_steps =
                      [this](JobRuntime& job, const std::string& detail) {
                        steps_.EndOpenSteps(job, detail);
                      }}),
      scheduling_({.clock = clock,
                   .options = options_,
                   .state = state_,
                   .lifecycle = lifecycle_,
                   .passes = passes_,
                   .switch_tree = switch_tree_,
                   .features = features_}),
      retention_({.io = io,
                  .store = store,
                  .clock = clock,
                  .options = options_,
                  .state = state_,
                  .commits = commits_,
                  .history_worker = history_worker_,
                  .features = features_,
                  .on_retired =
                      [this](const v1::JobRecord& record) {
                        submission_.OnJobRetired(record);
                      }}),
      submission_({.clock = clock,
                   .options = options_,
                   .state = state_,
                   .commits = commits_,
                   .passes = passes_,
                   .statistics = statistics_,
                   .allocation_liveness = allocation_liveness_,
                   .switch_tree = switch_tree_,
                   .scheduling = scheduling_}),
      steps_({.clock = clock,
              .options = options_,
              .state = state_,
              .commits = commits_,
              .lifecycle = lifecycle_,
              .features = features_}),
      nodes_({.clock = clock,
              .options = options_,
              .state = state_,
              .commits = commits_,
              .passes = passes_,
              .lifecycle = lifecycle_,
              .features = features_}),
      agents_({.clock = clock,
               .options = options_,
               .state = state_,
               .commits = commits_,
               .passes = passes_,
               .lifecycle = lifecycle_,
               .steps = steps_,
               .nodes = nodes_,
               .switch_tree = switch_tree_,
               .features = features_}),
      node_silence_({.clock = clock,
                     .options = options_,
                     .state = state_,
                     .nodes = nodes_,
                     .allocation_liveness = allocation_liveness_,
                     .tick_interval_ms = kTickInterval.count()}),
      job_timers_({.clock = clock,
                   .state = state_,
                   .lifecycle = lifecycle_,
                   .steps = steps_,
                   .allocation_liveness = allocation_liveness_,
                   .features = features_}) {
  MakeFeatures();
}

absl::Status Controller::Start() {
  absl::StatusOr<StateStore::Snapshot> snapshot = store_.Load();
  if (!snapshot.ok()) return snapshot.status();
  started_ms_ = clock_.NowMs();
  started_monotonic_ms_ = MonotonicMs(clock_);
  state_.next_job_id = snapshot->next_job_id;
  commits_.ResumeEventsAt(snapshot->next_event_sequence);
  state_.cluster_id = snapshot->cluster_id;
  if (state_.cluster_id == 0) {
    std::random_device random;
    state_.cluster_id = (uint64_t{random()} << 32) | random() | 1;
    commits_.staged().cluster_id = state_.cluster_id;
    commits_.AfterCommit(nullptr);
  }
  for (v1::NodeRecord& record : snapshot->nodes) {
    NodeRuntime node;
    node.record = std::move(record);
    // Nobody is connected yet: give every known node the grace period to
    // come back before its work is declared lost.
    if (node.record.state() != v1::NODE_DOWN) {
      node.record.set_state(v1::NODE_UNREACHABLE);
    }
    node.deadline_ms = started_monotonic_ms_ + options_.reconnect_grace_ms;
    // The partitions may have changed since the node was stored.
    nodes_.AssignPartitions(node.record);
    state_.nodes.emplace(node.record.name(), std::move(node));
  }
  size_t running = 0, pending = 0;
  for (v1::JobRecord& record : snapshot->jobs) {
    const uint64_t id = record.id();
    JobRuntime& job =
        state_.jobs.emplace_hint(state_.jobs.end(), id, JobRuntime())->second;
    job.record = std::move(record);
    JobStatus status = FromProto(job.record.state());
    if (status == JobStatus::kRunning) {
      ++running;
      for (const v1::RankExit& exit : job.record.exits()) {
        job.exited_ranks.insert(exit.rank());
      }
      lifecycle_.TakeNodeShares(job);
      for (int i = 0; i < job.record.allocation_size(); ++i) {
        const v1::NodeAllocation& share = job.record.allocation(i);
        uint32_t live = 0;
        for (uint32_t r = 0; r < ScriptRanksOn(job.record, i); ++r) {
          if (!job.exited_ranks.count(share.first_rank() + r)) ++live;
        }
        job.live_ranks[share.node()] = live;
      }
      // Step tasks not known to have exited.
      for (const v1::StepRecord& step : job.record.steps()) {
        for (const v1::NodeAllocation& share : step.nodes()) {
          uint32_t exited = 0;
          for (const v1::RankExit& exit : step.exits()) {
            if (exit.node() == share.node()) ++exited;
          }
          if (share.rank_count() > exited) {
            job.live_ranks[share.node()] += share.rank_count() - exited;
          }
        }
      }
    } else if (status == JobStatus::kPending) {
      ++pending;
    } else {
      ++state_.finished_jobs;
    }
    if (options_.metrics) options_.metrics->JobAdded(status);
    state_.Reindex(job);
    if (job.record.spec().allocation_only() && !IsTerminal(status)) {
      // Its client could not reach us while we were down: it gets as long
      // as the agents do, and never less than the limit itself.
      allocation_liveness_.Track(
          id, started_monotonic_ms_ + std::max(options_.inactive_limit_ms,
                                               options_.reconnect_grace_ms));
    }
  }
  // Fair share: the jobs that left the live state, as stored, then the
  // finished jobs still in it, oldest end first so the decay is applied in
  // time order.
  if (snapshot->retired_usage) {
    std::map<std::string, FairShare::Decayed> users;
    for (const auto& [user, usage] : snapshot->retired_usage->users()) {
      users[user] = {usage.value(), usage.at_ms()};
    }
    const auto& total = snapshot->retired_usage->total();
    retention_.retired_usage().Restore(users, {total.value(), total.at_ms()});
    lifecycle_.fair_share().Restore(std::move(users),
                                    {total.value(), total.at_ms()});
  }
  std::vector<const v1::JobRecord*> finished;
  for (const auto& [id, job] : state_.jobs) {
    if (IsTerminal(FromProto(job.record.state()))) {
      finished.push_back(&job.record);
    }
  }
  std::sort(finished.begin(), finished.end(), [](const auto* a, const auto* b) {
    return a->end_time_ms() < b->end_time_ms();
  });
  for (const v1::JobRecord* record : finished) {
    if (record->end_time_ms() > 0) {
      JobLifecycle::ChargeUsage(*record, lifecycle_.fair_share());
    }
    state_.finished_order.emplace_back(record->end_time_ms(), record->id());
  }
  for (const std::unique_ptr<ControllerFeature>& feature : features_) {
    feature->OnStateLoaded(snapshot->retired_usage ? &*snapshot->retired_usage
                                                   : nullptr);
  }
  log::Info("state loaded",
            {{"state_dir", options_.state_dir},
             {"jobs", state_.jobs.size()},
             {"pending", pending},
             {"running", running},
             {"nodes", state_.nodes.size()},
             {"next_job_id", state_.next_job_id},
             {"reconnect_grace_ms", options_.reconnect_grace_ms}});
  switch_tree_.Load(std::move(snapshot->topology));
  submission_.OnStateLoaded(started_ms_);
  // A stall before the first tick (gantryd stopped within 250 ms of
  // starting) must be noticed like any other, so the first tick measures
  // its gap from now.
  node_silence_.Start();
  tick_.Start();
  utilization_.Start();
  passes_.Request();
  return absl::OkStatus();
}

void Controller::Tick(uint64_t tick, int64_t late_ms) {
  if (options_.metrics) {
    options_.metrics->ObserveLoopLag(static_cast<double>(late_ms) / 1000.0);
  }
  node_silence_.Check();
  job_timers_.Check();
  if (scheduling_.EligibleAgainBy(clock_.NowMs())) passes_.Request();
  retention_.OnTick(clock_.NowMs());
  if (options_.metrics && tick % kTicksPerNodeCensus == 0) {
    PublishNodeMetrics(state_, *options_.metrics);
  }
  for (const std::unique_ptr<ControllerFeature>& feature : features_) {
    feature->OnTick(tick);
  }
}

void Controller::Stop() {
  stopped_ = true;
  // Queued history queries are answered (UNAVAILABLE) now, so the server's
  // shutdown has no call left open; the one under way ends by itself.
  history_worker_.Stop();
  retention_.Stop();
  tick_.Stop();
  utilization_.Stop();
  passes_.Stop();
  for (auto& [feature, wake] : feature_wakes_) wake->cancel();
  for (const std::unique_ptr<ControllerFeature>& feature : features_) {
    feature->OnStop();
  }
  // gantry run waits on its step: tell it to ask the next controller, so
  // the server's shutdown has no call left open.
  for (auto& [id, job] : state_.jobs) {
    for (auto& [step, waiters] : job.step_waiters) {
      for (const auto& done : waiters) {
        done(absl::UnavailableError("the controller is stopping"));
      }
    }
    job.step_waiters.clear();
  }
}

}  // namespace gantry
