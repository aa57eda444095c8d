// The controller: the single owner of cluster state (jobs, nodes, events),
// and the facade the rpc layer calls. Its core (core/) is a set of classes
// over the same tables, each given the parts it works with:
//   cluster_state.h       the jobs and nodes, and their indexes
//   commit_pipeline.h     the group commit: nothing is told before durable
//   job_lifecycle.h       starts, events, failures, shares, checkpoints,
//                         the messages that start and stop ranks
//   scheduling_pass.h     a pass; pass_pacer.h says when one runs
//   job_submission.h      checking and staging new jobs
//   job_steps.h           gantry run inside a job
//   agent_protocol.h      what agents say; node_administration.h drain,
//                         partitions and a node going down
//   job_retention.h       finished jobs to the history
//   switch_tree.h         the imported switch tree
//   node_silence.h        nodes not heard from in time
//   job_timers.h          time limits, deadlines, hangs, InactiveLimit
//   periodic_tick.h       the tick; utilization_sampler.h GPU use over time
// The features beside the core (core/controller_feature.h; features/) hear of
// what happens through ControllerFeature's hooks. What stays here:
//   controller.cc             start (loading the state) and stop
//   controller_job_control.cc cancel, signal, hold, release, progress
//   controller_job_update.cc  scontrol requeue and update
//   controller_allocations.cc srun/salloc outside a job: their end, and
//                             the keepalives of their clients
//   controller_queries.cc     the read-only views (views/): job lists, a
//                             job, nodes, sacct, sprio, sshare, sdiag
//   controller_status.cc      `gantry status`
//   controller_features.cc    what the features see (FeatureContext)
// What it is set up with is controller_options.h; what it holds of each
// job and node beside the stored record, controller_runtime.h.
//
// Threading: every method runs on the loop thread of the io_context given at
// construction (gRPC handlers post to it). Nothing here takes a lock; the
// store is written only from that thread.
//
// Durability: mutations are staged into core_.commits (commit_pipeline.h, the
// group commit) and are durable before anyone is told about them.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "common/ids.h"
#include "common/node_constraint.h"
#include "common/topology.h"
#include "daemon/controller/core/agent_link.h"
#include "daemon/controller/core/caller.h"
#include "daemon/controller/core/controller_core.h"
#include "daemon/controller/core/controller_feature.h"
#include "daemon/controller/core/controller_options.h"
#include "daemon/controller/core/controller_runtime.h"
#include "daemon/controller/core/history_worker.h"
#include "daemon/controller/core/job_state_proto.h"
#include "daemon/controller/core/managed_job.h"
#include "daemon/controller/core/periodic_tick.h"
#include "daemon/controller/core/scheduling_input.h"
#include "daemon/scheduler/job_state_machine.h"
#include "daemon/scheduler/partition_config.h"
#include "daemon/scheduler/priority.h"
#include "daemon/scheduler/restart_policy.h"
#include "daemon/store/state_store.h"
#include "gantry/v1/agent.pb.h"
#include "gantry/v1/client.pb.h"

namespace gantry {

class Controller {
 public:
  Controller(boost::asio::io_context& io, StateStore& store, const Clock& clock,
             ControllerOptions options);
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Loads the state and starts the periodic checks. Call once, on the loop
  // thread, before serving requests.
  absl::Status Start();
  // Stops timers so the loop can run dry.
  void Stop();

  // Client API. `done` runs on the loop thread once the outcome is durable.
  // `caller` is who proved to be asking: the job's owner on Submit, and
  // the one whose rights are checked everywhere else.
  void Submit(v1::SubmitRequest request, const Caller& caller,
              std::function<void(absl::StatusOr<JobId>)> done) {
    core_.submission.Submit(std::move(request), caller, std::move(done));
  }
  void Cancel(const v1::CancelRequest& request, const Caller& caller,
              std::function<void(v1::CancelResponse)> done);
  // Holds or releases pending jobs (scontrol hold / release); `done` runs
  // once the change is stored.
  void Hold(const v1::HoldRequest& request, const Caller& caller,
            std::function<void(v1::HoldResponse)> done);
  // scontrol requeue: running or finished jobs back to pending
  // (controller_job_update.cc).
  void Requeue(const v1::RequeueRequest& request, const Caller& caller,
               std::function<void(v1::RequeueResponse)> done);
  // scontrol update JobId=...: time limit, partition, name, GPUs.
  void UpdateJob(const v1::UpdateJobRequest& request, const Caller& caller,
                 std::function<void(v1::UpdateJobResponse)> done);
  // The read-only views (views/; controller_queries.cc).
  // One page of job summaries (views/job_listing.h).
  absl::StatusOr<v1::ListJobsResponse> ListJobs(
      const v1::ListJobsRequest& request, const Caller& caller) const;
  // A job from the live state or, once it has left it, from the history.
  // The script, its arguments, step command lines, the submission token and
  // the datasets only for the job's owner and admins; the environment
  // never. NOT_FOUND when it is in neither.
  absl::StatusOr<v1::GetJobResponse> GetJob(const v1::GetJobRequest& request,
                                            const Caller& caller) const;
  absl::StatusOr<v1::GetJobResponse> GetJob(JobId job_id,
                                            const Caller& caller) const;
  v1::ListNodesResponse ListNodes() const;
  v1::ClusterStatusResponse ClusterStatus() const;
  // sacct: one page of jobs from the live state
  // and the history, the caller's own unless an admin asks. `done` runs on
  // the history thread (daemon/controller/history_worker.h), or on the
  // loop for a request refused at once: INVALID_ARGUMENT for a bad page
  // token or an outsized filter; UNAVAILABLE when too many queries wait or
  // the controller stops, or with DATA_LOSS, when the history cannot be
  // read.
  void Accounting(
      const v1::AccountingRequest& request, const Caller& caller,
      std::function<void(absl::StatusOr<v1::AccountingResponse>)> done);
  // sprio, sshare, sdiag: priority factors of the pending jobs, fair-share
  // usage per user and the controller's counters.
  v1::SchedulerReportResponse SchedulerReport() const;
  // From inside a job: progress and completed checkpoints.
  void ReportProgress(const v1::ReportProgressRequest& request,
                      const Caller& caller,
                      std::function<void(absl::Status)> done);
  // Admin: import the switch tree (a Slurm topology.conf or an
  // ibnetdiscover dump). A bad file changes nothing.
  void ImportTopology(
      const v1::ImportTopologyRequest& request, const Caller& caller,
      std::function<void(absl::StatusOr<v1::TopologyReport>)> done) {
    core_.switch_tree.Import(request, caller, std::move(done));
  }
  v1::TopologyReport TopologyReport() const {
    return core_.switch_tree.Report();
  }
  // From inside a running job (gantry run): start a step on its
  // allocation; `done` gets the step once its launch is durable.
  // With request.retry_when_busy, a step the job's running steps leave no
  // room for is answered busy (step_resources.h) instead of started.
  void LaunchStep(
      const v1::LaunchStepRequest& request, const Caller& caller,
      std::function<void(absl::StatusOr<v1::LaunchStepResponse>)> done) {
    core_.steps.Launch(request, caller, std::move(done));
  }
  // `done` gets the step once it has ended (at once if it has).
  void WaitStep(const v1::WaitStepRequest& request, const Caller& caller,
                std::function<void(absl::StatusOr<v1::StepRecord>)> done) {
    core_.steps.Wait(request, caller, std::move(done));
  }
  // srun/salloc outside a job: its client ends the allocation
  // (controller_allocations.cc).
  void EndAllocation(const v1::EndAllocationRequest& request,
                     const Caller& caller,
                     std::function<void(absl::Status)> done);
  // srun/salloc outside a job: its client is still there
  // (controller_allocations.cc). Answers the job's state and how often to
  // say so again.
  absl::StatusOr<v1::KeepAllocationResponse> KeepAllocation(
      const v1::KeepAllocationRequest& request, const Caller& caller);
  // Admin: drain nodes (or resume them).
  void Drain(const v1::DrainRequest& request, const Caller& caller,
             std::function<void(absl::Status)> done) {
    core_.nodes.Drain(request, caller, std::move(done));
  }

  // The registered feature of type `Feature` (features/), for the rpc
  // layer to hand it the requests it answers (`gantry cache` to the
  // datasets feature); null when gantryd runs without it. Call on the
  // loop thread, like every method.
  template <typename Feature>
  Feature* FindFeature() const {
    for (const std::unique_ptr<ControllerFeature>& feature : features_) {
      if (auto* found = dynamic_cast<Feature*>(feature.get())) return found;
    }
    return nullptr;
  }

  // Agent stream.
  void OnAgentMessage(const std::shared_ptr<AgentLink>& link,
                      const v1::AgentMessage& message) {
    core_.agents.OnAgentMessage(link, message);
  }
  // `why`: the reason the stream was cut (agent_stream_guard.h); empty
  // when it simply ended.
  void OnAgentGone(const std::shared_ptr<AgentLink>& link,
                   const std::string& why = "") {
    core_.agents.OnAgentGone(link, why);
  }

 private:
  // One job of an UpdateJob request: every change checked before any is
  // made (controller_job_update.cc).
  absl::Status ApplyJobUpdate(const v1::UpdateJobRequest& request,
                              const Caller& caller, JobRuntime& job);

  // The periodic tick (controller.cc): silent nodes, the jobs' clocks,
  // retention, gauges, the features' OnTick.
  static constexpr std::chrono::milliseconds kTickInterval{250};
  // One tick of tick_ (`late_ms`: how late it ran).
  void Tick(uint64_t tick, int64_t late_ms);

  // Features beside the core (controller_features.cc): made from
  // options_.features at construction; each hook goes to every one in
  // turn.
  class FeatureView;
  void MakeFeatures();

  boost::asio::io_context& io_;
  StateStore& store_;
  const Clock& clock_;
  const ControllerOptions options_;
  PeriodicTick tick_;  // runs Tick
  bool stopped_ = false;
  int64_t started_ms_ = 0;            // wall clock, for status and history
  int64_t started_monotonic_ms_ = 0;  // for grace periods from the start

  // The tables and the classes of the core, wired together
  // (controller_core.h).
  ControllerCore core_;
  // The wakes features asked for (FeatureContext::WakeAfter), one each.
  std::map<const ControllerFeature*, std::unique_ptr<boost::asio::steady_timer>>
      feature_wakes_;
  // What the features read of this controller, and the features made
  // from options_.features at construction.
  std::unique_ptr<FeatureContext> feature_view_;
  FeatureList features_;
  // Reads of the history (accounting, expiry): off the loop. Last, so it
  // is joined first, while what its tasks use still exists. Queries past
  // this many waiting are refused (UNAVAILABLE) rather than queued.
  static constexpr size_t kMaxQueuedHistoryTasks = 64;
  HistoryWorker history_worker_{kMaxQueuedHistoryTasks};
};

}  // namespace gantry
