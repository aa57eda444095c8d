// Controller: construction, loading the state at start, and stopping.
// controller.h maps the other concerns to their files.
#include "daemon/controller/controller.h"

#include <algorithm>
#include <cstdlib>
#include <random>

#include <boost/asio/post.hpp>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "daemon/controller/core/controller_metrics.h"
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
      core_(io, store, clock, options_, features_, history_worker_,
            kTickInterval.count()) {
  MakeFeatures();
}

absl::Status Controller::Start() {
  absl::StatusOr<StateStore::Snapshot> snapshot = store_.Load();
  if (!snapshot.ok()) return snapshot.status();
  started_ms_ = clock_.NowMs();
  started_monotonic_ms_ = MonotonicMs(clock_);
  core_.state.next_job_id = snapshot->next_job_id;
  core_.commits.ResumeEventsAt(snapshot->next_event_sequence);
  core_.state.cluster_id = snapshot->cluster_id;
  if (core_.state.cluster_id == 0) {
    std::random_device random;
    core_.state.cluster_id = (uint64_t{random()} << 32) | random() | 1;
    core_.commits.staged().cluster_id = core_.state.cluster_id;
    core_.commits.AfterCommit(nullptr);
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
    core_.nodes.AssignPartitions(node.record);
    core_.state.nodes.emplace(node.record.name(), std::move(node));
  }
  size_t running = 0, pending = 0;
  for (v1::JobRecord& record : snapshot->jobs) {
    const uint64_t id = record.id();
    JobRuntime& job =
        core_.state.jobs.emplace_hint(core_.state.jobs.end(), id, JobRuntime())
            ->second;
    job.record = std::move(record);
    JobStatus status = FromProto(job.record.state());
    if (status == JobStatus::kRunning) {
      ++running;
      for (const v1::RankExit& exit : job.record.exits()) {
        job.exited_ranks.insert(exit.rank());
      }
      core_.lifecycle.TakeNodeShares(job);
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
      ++core_.state.finished_jobs;
    }
    if (options_.metrics) options_.metrics->JobAdded(status);
    core_.state.Reindex(job);
    if (job.record.spec().allocation_only() && !IsTerminal(status)) {
      // Its client could not reach us while we were down: it gets as long
      // as the agents do, and never less than the limit itself.
      core_.allocation_liveness.Track(
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
    core_.retention.retired_usage().Restore(users,
                                            {total.value(), total.at_ms()});
    core_.lifecycle.fair_share().Restore(std::move(users),
                                         {total.value(), total.at_ms()});
  }
  std::vector<const v1::JobRecord*> finished;
  for (const auto& [id, job] : core_.state.jobs) {
    if (IsTerminal(FromProto(job.record.state()))) {
      finished.push_back(&job.record);
    }
  }
  std::sort(finished.begin(), finished.end(), [](const auto* a, const auto* b) {
    return a->end_time_ms() < b->end_time_ms();
  });
  for (const v1::JobRecord* record : finished) {
    if (record->end_time_ms() > 0) {
      JobLifecycle::ChargeUsage(*record, core_.lifecycle.fair_share());
    }
    core_.state.finished_order.emplace_back(record->end_time_ms(),
                                            record->id());
  }
  for (const std::unique_ptr<ControllerFeature>& feature : features_) {
    feature->OnStateLoaded(snapshot->retired_usage ? &*snapshot->retired_usage
                                                   : nullptr);
  }
  log::Info("state loaded",
            {{"state_dir", options_.state_dir},
             {"jobs", core_.state.jobs.size()},
             {"pending", pending},
             {"running", running},
             {"nodes", core_.state.nodes.size()},
             {"next_job_id", core_.state.next_job_id},
             {"reconnect_grace_ms", options_.reconnect_grace_ms}});
  core_.switch_tree.Load(std::move(snapshot->topology));
  core_.submission.OnStateLoaded(started_ms_);
  // A stall before the first tick (gantryd stopped within 250 ms of
  // starting) must be noticed like any other, so the first tick measures
  // its gap from now.
  core_.node_silence.Start();
  tick_.Start();
  core_.utilization.Start();
  core_.passes.Request();
  return absl::OkStatus();
}

void Controller::Tick(uint64_t tick, int64_t late_ms) {
  if (options_.metrics) {
    options_.metrics->ObserveLoopLag(static_cast<double>(late_ms) / 1000.0);
  }
  core_.node_silence.Check();
  core_.job_timers.Check();
  if (core_.scheduling.EligibleAgainBy(clock_.NowMs())) core_.passes.Request();
  core_.retention.OnTick(clock_.NowMs());
  if (options_.metrics && tick % kTicksPerNodeCensus == 0) {
    PublishNodeMetrics(core_.state, *options_.metrics);
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
  core_.retention.Stop();
  tick_.Stop();
  core_.utilization.Stop();
  core_.passes.Stop();
  for (auto& [feature, wake] : feature_wakes_) wake->cancel();
  for (const std::unique_ptr<ControllerFeature>& feature : features_) {
    feature->OnStop();
  }
  // gantry run waits on its step: tell it to ask the next controller, so
  // the server's shutdown has no call left open.
  for (auto& [id, job] : core_.state.jobs) {
    for (auto& [step, waiters] : job.step_waiters) {
      for (const auto& done : waiters) {
        done(absl::UnavailableError("the controller is stopping"));
      }
    }
    job.step_waiters.clear();
  }
}

}  // namespace gantry
