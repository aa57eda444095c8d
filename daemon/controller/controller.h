// The controller: the single owner of cluster state (jobs, nodes, events).
//
// One class, its members defined by concern (the private section below
// follows the same map):
//   controller.cc             start and stop
//   controller_submission.cc  validation and submission, partition limits
//   controller_job_control.cc cancel, signal, hold, release
//   controller_nodes.cc       partitions of a node, drain/resume, node down
//   controller_agents.cc      the agent protocol: registration,
//                             reconciliation, rank events, heartbeats
//   controller_deadlines.cc   the periodic tick: silent nodes, time
//                             limits, deadlines and hangs, node gauges
//   controller_steps.cc       steps (gantry run inside a job)
//   controller_allocations.cc srun/salloc outside a job: their end, and
//                             the keepalives of their clients
//   controller_queries.cc     read-only views: job lists, a job, nodes
//   controller_status.cc      `gantry status` sampling
//   controller_features.cc    the features beside the core
//                             (controller_feature.h; features/)
// What it is set up with is controller_options.h; what it holds of each
// job and node beside the stored record, controller_runtime.h. The parts
// of its core with a class of their own: the tables (cluster_state.h),
// the group commit (commit_pipeline.h), the job lifecycle
// (job_lifecycle.h), the scheduling pass (scheduling_pass.h) and when it
// runs (pass_pacer.h), the periodic tick (periodic_tick.h) and the switch
// tree (switch_tree.h).
//
// Threading: every method runs on the loop thread of the io_context given at
// construction (gRPC handlers post to it). Nothing here takes a lock; the
// store is written only from that thread.
//
// Durability: mutations are staged into commits_ (commit_pipeline.h, the
// group commit) and are durable before anyone is told about them.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "common/ibnetdiscover_parser.h"
#include "common/ids.h"
#include "common/node_constraint.h"
#include "common/topology.h"
#include "daemon/controller/agent_link.h"
#include "daemon/controller/allocation_liveness.h"
#include "daemon/controller/caller.h"
#include "daemon/controller/cluster_state.h"
#include "daemon/controller/commit_pipeline.h"
#include "daemon/controller/controller_feature.h"
#include "daemon/controller/controller_options.h"
#include "daemon/controller/controller_runtime.h"
#include "daemon/controller/controller_statistics.h"
#include "daemon/controller/history_worker.h"
#include "daemon/controller/job_lifecycle.h"
#include "daemon/controller/job_retention.h"
#include "daemon/controller/job_state_proto.h"
#include "daemon/controller/node_event_log.h"
#include "daemon/controller/pass_pacer.h"
#include "daemon/controller/periodic_tick.h"
#include "daemon/controller/recent_environments.h"
#include "daemon/controller/scheduling_input.h"
#include "daemon/controller/scheduling_pass.h"
#include "daemon/controller/switch_tree.h"
#include "daemon/controller/utilization_history.h"
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
              std::function<void(absl::StatusOr<JobId>)> done);
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
  // One page of job summaries (daemon/controller/job_filter.h: no payloads;
  // the submission token and datasets only on `caller`'s own jobs, or all
  // for an admin) from the live state. INVALID_ARGUMENT for a bad page
  // token or an outsized filter. Not const: it lends each record's payloads
  // aside while copying the rest.
  absl::StatusOr<v1::ListJobsResponse> ListJobs(
      const v1::ListJobsRequest& request, const Caller& caller);
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
  // sacct (controller_accounting.cc): one page of jobs from the live state
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
    switch_tree_.Import(request, caller, std::move(done));
  }
  v1::TopologyReport TopologyReport() const { return switch_tree_.Report(); }
  // From inside a running job (gantry run): start a step on its
  // allocation; `done` gets the step once its launch is durable.
  // With request.retry_when_busy, a step the job's running steps leave no
  // room for is answered busy (step_resources.h) instead of started.
  void LaunchStep(
      const v1::LaunchStepRequest& request, const Caller& caller,
      std::function<void(absl::StatusOr<v1::LaunchStepResponse>)> done);
  // `done` gets the step once it has ended (at once if it has).
  void WaitStep(const v1::WaitStepRequest& request, const Caller& caller,
                std::function<void(absl::StatusOr<v1::StepRecord>)> done);
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
             std::function<void(absl::Status)> done);

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
                      const v1::AgentMessage& message);
  // `why`: the reason the stream was cut (agent_stream_guard.h); empty
  // when it simply ended.
  void OnAgentGone(const std::shared_ptr<AgentLink>& link,
                   const std::string& why = "");

 private:
  // Submission (controller_submission.cc).
  // Takes the spec by value: Submit moves the request's in (its exported
  // environment is the bulk of it).
  absl::StatusOr<v1::JobRecord> ValidateSubmission(v1::JobSpec spec) const;
  // A job whose --nodelist, --exclude or --constraint leave too few nodes
  // that could ever hold it: INVALID_ARGUMENT saying what it needs and
  // what there is (controller_submission.cc).
  absl::Status CheckRestrictedJob(const v1::JobRecord& job) const;
  // The partition of that name; null when none.
  const PartitionConfig* FindPartition(const std::string& name) const;
  const PartitionConfig& DefaultPartition() const;
  // One job of an UpdateJob request: every change checked before any is
  // made (controller_job_update.cc).
  absl::Status ApplyJobUpdate(const v1::UpdateJobRequest& request,
                              const Caller& caller, JobRuntime& job);
  // Whether some node of the job's partition could have its GPU type
  // (gpu_type_census.h); INVALID_ARGUMENT naming the types there if not.
  absl::Status CheckGpuType(const v1::JobRecord& job) const;
  // Applies a partition's limits to a submission (default time, MaxTime,
  // MaxNodes); INVALID_ARGUMENT naming the limit when it is exceeded.
  absl::Status ApplyPartitionLimits(const PartitionConfig& partition,
                                    v1::JobSpec& spec) const;

  // Cancel, signal, hold and release (controller_job_control.cc).
  // The job, if `caller` may act on it (its owner or an admin); NOT_FOUND
  // or PERMISSION_DENIED saying so otherwise.
  absl::StatusOr<JobRuntime*> ManagedJob(uint64_t job_id, const Caller& caller);
  // ManagedJob for one entry of a per-job answer (cancel, hold): null, with
  // `result` saying why, when the caller may not act on it.
  JobRuntime* ManagedJobFor(uint64_t job_id, const Caller& caller,
                            v1::CancelResult& result);
  // The jobs a cancel or hold names: `job_ids` as given, then those of its
  // filter (CancelRequest.filter, checked with CheckFilter by the caller),
  // in order, each once; an ID_TASK naming no job gets a failed result in
  // `unknown`.
  std::vector<uint64_t> ResolveTargets(
      const google::protobuf::RepeatedField<uint64_t>& job_ids,
      const v1::JobFilter& filter,
      google::protobuf::RepeatedPtrField<v1::CancelResult>& unknown) const;

  // Node administration (controller_nodes.cc).
  // Sets the node's partitions and hot-spare mark from the options.
  void AssignPartitions(v1::NodeRecord& record) const;
  // Takes the node out of scheduling (admin or health check) until resumed;
  // its running jobs go on.
  // `by`: who drained it (sinfo -R's USER).
  void DrainNode(NodeRuntime& node, const std::string& reason,
                 const std::string& by = "gantryd");
  void MarkNodeDown(NodeRuntime& node, const std::string& why);

  // Steps (controller_steps.cc).
  void SendStepLaunch(const v1::LaunchStepRequest& request,
                      const v1::StepRecord& step);
  void SendStepKill(const JobRuntime& job, const v1::StepRecord& step,
                    int signal,
                    v1::KillRanks::Reason reason = v1::KillRanks::REASON_OTHER);
  void OnStepTaskEvent(const std::string& node, const v1::RankEvent& event);
  // Records the step's end and answers its waiters once that is durable;
  // the caller stages the job.
  void EndStep(JobRuntime& job, v1::StepRecord& step,
               const std::string& detail);
  // The attempt ended: its steps end with it.
  void EndOpenSteps(JobRuntime& job, const std::string& detail);
  // --wait: stops the rest of a step whose first task ended long enough ago.
  void CheckStepWaits(JobRuntime& job, int64_t monotonic_ms);

  // Interactive allocations (controller_allocations.cc): ends those whose
  // client has not been heard from within the inactive limit.
  void EndSilentAllocations(int64_t monotonic_ms);

  // sstat (controller_accounting.cc): keeps a heartbeat's measurements of
  // the running attempts this node holds a share of; others are dropped.
  void RecordUsage(const std::string& node, const v1::Heartbeat& heartbeat);

  // Agents and timers (controller_agents.cc).
  void OnRegister(const std::shared_ptr<AgentLink>& link,
                  const v1::Register& reg);
  void OnRankEvent(const std::string& node, const v1::RankEvent& event);
  void OnHealth(NodeRuntime& node, const v1::Heartbeat& heartbeat);
  void OnCheckpointReport(const std::string& node,
                          const v1::CheckpointReport& report);
  // How a registering agent relates to the node's last registration.
  enum class AgentContinuity {
    kSameAgent,       // the same process redialled: it has all it was sent
    kAgentRestarted,  // a new agent process, same boot: its ranks died
    kNodeRebooted,    // the node itself restarted
  };
  void ReconcileRanks(const std::string& node, const v1::Register& reg,
                      AgentContinuity continuity);
  // Ranks of the job's current attempt that the registering agent neither
  // runs nor saw exit: re-sent when the launch never reached it, restarted
  // uncharged when the agent restarted, a node fault (drain) only when the
  // node rebooted.
  void OnLostRanks(JobRuntime& job, const std::string& node,
                   const std::string& ranks, AgentContinuity continuity);
  // INVALID_ARGUMENT when `node` cannot hold `rank`: an attempt of its job
  // that never started, or a rank (or step task) of the current attempt
  // placed on another node. A rank of a job or step no longer known, or of
  // an earlier attempt, is not judged (a late report is normal).
  absl::Status CheckRankHeld(const std::string& node,
                             const v1::RankId& rank) const;
  // Ends a stream whose agent broke the protocol; its node is then
  // unreachable like any whose stream ended.
  void CutAgent(const std::shared_ptr<AgentLink>& link, const std::string& node,
                const absl::Status& why);
  void ReclassifyRecentFailures(const std::string& node_name);
  // The periodic tick and what it checks (controller_deadlines.cc).
  static constexpr std::chrono::milliseconds kTickInterval{250};
  // One tick of tick_ (`late_ms`: how late it ran).
  void Tick(uint64_t tick, int64_t late_ms);
  void CheckDeadlines();
  // Node and GPU gauges from the node table (on each timer tick).
  void PublishNodeMetrics();

  // Features beside the core (controller_features.cc): made from
  // options_.features at construction; each hook goes to every one in
  // turn.
  class FeatureView;
  void MakeFeatures();
  // Whether any feature answers yes to `ask` (a hook that may hold or take
  // something: a launch, a job's ranks, a lost node); stops at the first.
  template <typename Ask>
  bool AnyFeature(Ask&& ask) {
    for (const std::unique_ptr<ControllerFeature>& feature : features_) {
      if (ask(*feature)) return true;
    }
    return false;
  }

  // `gantry status` (controller_status.cc): samples GPU utilization every
  // few seconds into utilization_.
  void ArmStatusTimer();
  void SampleUtilization();

  boost::asio::io_context& io_;
  StateStore& store_;
  const Clock& clock_;
  const ControllerOptions options_;
  PeriodicTick tick_;  // CheckDeadlines and the features' OnTick
  bool stopped_ = false;
  int64_t started_ms_ = 0;            // wall clock, for status and history
  int64_t started_monotonic_ms_ = 0;  // for grace periods from the start

  ClusterState state_;  // the jobs and nodes

  // The group commit: staged changes, the batch being written.
  CommitPipeline commits_;
  // When scheduling passes run (pass_pacer.h): asks coalesced, passes
  // kept to about a fifth of the loop, none while leadership is unsure.
  PassPacer passes_;
  int64_t last_check_ms_ = 0;  // when CheckDeadlines last ran (monotonic)
  // Most agents fell silent at once (CheckDeadlines): those silent then are
  // not marked down before this (monotonic), even once the others are back.
  int64_t mass_silence_until_ms_ = 0;
  std::set<std::string> mass_silence_nodes_;
  // The wakes features asked for (FeatureContext::WakeAfter), one each.
  std::map<const ControllerFeature*, std::unique_ptr<boost::asio::steady_timer>>
      feature_wakes_;
  SwitchTree switch_tree_;
  // For `gantry status` (controller_status.cc), in memory only.
  boost::asio::steady_timer status_timer_{io_};
  UtilizationHistory utilization_;
  RecentEnvironments recent_environments_;  // see Submit
  // Deadlines of the interactive allocations' clients, in memory only
  // (Start gives them a grace period).
  AllocationLiveness allocation_liveness_;
  ControllerStatistics statistics_;  // for sdiag
  // Starts, events, failures, node shares, checkpoints and the messages
  // to agents that go with them (job_lifecycle.h).
  JobLifecycle lifecycle_;
  SchedulingPass scheduling_;  // what a pass does (scheduling_pass.h)
  JobRetention retention_;     // finished jobs to the history
  // (submitter's uid, submission token) -> the job it made, for live jobs
  // (see Submit). Keyed by the uid as well: a token is private to its
  // submitter, so another user sending the same one makes a job of their
  // own and can neither find nor re-point this entry.
  std::map<std::pair<uint32_t, std::string>, uint64_t> submission_tokens_;
  NodeEventLog node_events_;
  // What the features read of this controller, and the features made
  // from options_.features at construction.
  std::unique_ptr<FeatureContext> feature_view_;
  FeatureList features_;
  // Held only here: what the history thread posts to the loop holds a
  // weak pointer to it, and does nothing once the controller is gone.
  const std::shared_ptr<const int> lifetime_ = std::make_shared<const int>(0);
  // Reads of the history (accounting, expiry): off the loop. Last, so it
  // is joined first, while what its tasks use still exists. Queries past
  // this many waiting are refused (UNAVAILABLE) rather than queued.
  static constexpr size_t kMaxQueuedHistoryTasks = 64;
  HistoryWorker history_worker_{kMaxQueuedHistoryTasks};
};

}  // namespace gantry
