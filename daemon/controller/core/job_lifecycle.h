// The job lifecycle of the controller's core: a job's start, the events
// that move it through the job state machine and their effects, failures
// and what the restart policy makes of them, the node shares a job holds,
// its fair-share charge, its checkpoints and the times goodput splits an
// attempt by, and the messages that start and stop its ranks.
//
//   job_lifecycle.cc  start, events and their effects, failures,
//                     checkpoints
//   node_shares.cc    the shares a job holds on its nodes, fair share
//   attempt_times.cc  when an attempt's ranks all ran, its first progress
//                     and latest checkpoint (goodput.h)
//   rank_messages.cc  launch, kill and warning-signal messages to agents
//
// Everything else in the controller reaches a job's state through this
// class: an event is applied here or not at all, so the effects the state
// machine returns are carried out exactly once.
//
// Threading: the controller's loop only, like the rest of its core.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <boost/asio/io_context.hpp>

#include "absl/status/status.h"
#include "common/clock.h"
#include "daemon/controller/core/allocation_liveness.h"
#include "daemon/controller/core/cluster_state.h"
#include "daemon/controller/core/commit_pipeline.h"
#include "daemon/controller/core/controller_feature.h"
#include "daemon/controller/core/controller_options.h"
#include "daemon/controller/core/controller_runtime.h"
#include "daemon/controller/core/controller_statistics.h"
#include "daemon/controller/core/pass_pacer.h"
#include "daemon/scheduler/job_state_machine.h"
#include "daemon/scheduler/priority.h"
#include "daemon/scheduler/restart_policy.h"
#include "daemon/store/state_store.h"
#include "gantry/v1/agent.pb.h"

namespace gantry {

class JobLifecycle {
 public:
  // What the lifecycle works with; every reference outlives it.
  struct Parts {
    boost::asio::io_context& io;
    StateStore& store;  // the jobs' stored environments
    const Clock& clock;
    const ControllerOptions& options;
    ClusterState& state;
    CommitPipeline& commits;
    PassPacer& passes;
    ControllerStatistics& statistics;
    AllocationLiveness& allocation_liveness;
    const FeatureList& features;
  };
  // What it asks of the rest of the controller.
  struct Hooks {
    // The job's attempt ended: its open steps end with it.
    std::function<void(JobRuntime& job, const std::string& detail)>
        end_open_steps;
  };
  JobLifecycle(Parts parts, Hooks hooks);
  JobLifecycle(const JobLifecycle&) = delete;
  JobLifecycle& operator=(const JobLifecycle&) = delete;

  // Starts the job's next attempt on the allocation the scheduler gave it.
  void StartJob(JobRuntime& job);
  // Applies an event through the job state machine and carries out exactly
  // the effects it returns. Returns the transition's error for bad
  // requests.
  absl::Status ApplyEvent(JobRuntime& job, const JobEvent& event,
                          const std::string& detail);
  // A running job's attempt failed: asks the restart policy, then requeues
  // the job or ends it. `fault_time_ms`: when the failure happened (a
  // silent node's last message, a hung job's last progress); 0: now.
  void FailJob(JobRuntime& job, FailureKind kind, int exit_code, int signal,
               bool all_ranks_exited, const std::string& detail,
               int64_t fault_time_ms = 0);
  // `write_seconds`: how long writing it took (0: unknown). `source`:
  // "report" for the job's own report, else where the marker was found.
  void RecordCheckpoint(JobRuntime& job, const std::string& path, int64_t step,
                        const std::string& source, double write_seconds = 0);

  // Node shares (node_shares.cc).
  // Whether losing the node ends the job's attempt: its ranks or step
  // tasks run there, or (script_once) the node is in its running
  // allocation.
  bool JobNeedsNode(const JobRuntime& job, const std::string& node) const;
  // Counts the job's allocation against its nodes (at start, and for the
  // running jobs when the state is loaded).
  void TakeNodeShares(JobRuntime& job);
  // Gives back the job's share of one node.
  void ReleaseNodeShare(JobRuntime& job, const std::string& node);
  // Frees the node shares of a job that is not running and whose ranks
  // there are gone (or whose node is down).
  void ReleaseFinished(JobRuntime& job);
  // The same for one node's share: after the job has left RUNNING (when
  // ReleaseFinished walked them all), a rank exit can free only its own
  // node's (a node going down releases its own), and a gang's thousand
  // exits each walking a thousand nodes was a million steps on the loop.
  void ReleaseFinishedOn(JobRuntime& job, const std::string& node);
  // Adds a finished job's GPU-seconds (CPU-seconds for CPU-only jobs) to
  // its user's usage in `share`.
  static void ChargeUsage(const v1::JobRecord& record, FairShare& share);
  // Fair-share usage per user, charged when a job finishes. Not stored on
  // its own: the controller rebuilds it at start from the finished jobs in
  // the state and the usage of those retired, so a restart keeps every
  // user's decayed usage.
  FairShare& fair_share() { return fair_share_; }
  const FairShare& fair_share() const { return fair_share_; }

  // An attempt's times (attempt_times.cc).
  // A rank of the job's attempt `attempt` started; once all have, the
  // attempt's ranks_running_ms is set.
  void NoteRankStarted(JobRuntime& job, uint32_t attempt, uint32_t rank);
  // A progress report, or a new checkpoint, of the running attempt.
  void NoteProgress(JobRuntime& job, bool checkpoint);

  // Messages that start and stop ranks (rank_messages.cc).
  // To every node of the allocation from its `from_share`-th on (a few
  // dozen nodes per loop turn, the next ones posted behind what else is
  // queued), or only to `only_node`.
  void SendLaunch(uint64_t job_id, uint32_t attempt,
                  const std::string* only_node = nullptr, int from_share = 0);
  // `signal_only`: deliver `signal` and nothing more (scancel --signal);
  // otherwise SIGKILL follows after the grace period.
  // `reason`: a cancel and a time limit make the agents write Slurm's
  // "*** JOB N ON NODE CANCELLED AT ... ***" line
  // (daemon/launch/kill_reason.h).
  void SendKill(const JobRuntime& job, int signal = 15,
                bool signal_only = false,
                v1::KillRanks::Scope scope = v1::KillRanks::SCOPE_ALL,
                v1::KillRanks::Reason reason = v1::KillRanks::REASON_OTHER);
  // sbatch --signal: its signal once per attempt, when the time left is
  // what it asked for.
  // running_ms: how long the attempt has run (JobRuntime::running_for).
  void SendWarningSignal(JobRuntime& job, int64_t running_ms);

 private:
  bool ShareReleasable(const JobRuntime& job, const std::string& node) const;

  Parts parts_;
  Hooks hooks_;
  FairShare fair_share_;
};

}  // namespace gantry
