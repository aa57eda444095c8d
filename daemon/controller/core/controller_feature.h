// A feature beside the controller's core, in the shape of a job-manager
// plugin: it owns its state and learns what happens through the hooks
// below, which the core calls on the loop thread for each registered
// feature in the order they were registered. The core names no feature;
// gantryd registers them (ControllerOptions::features), and a feature's
// library links the core, never the other way round.
//
// A feature sees records, not the job table: it reads the jobs through its
// FeatureContext and changes what the core owns only by asking it there.
// Features live in daemon/controller/features/<name>/, each its own library
// with its own tests over a fake context
// (tests/unit/daemon/controller/features/fake_feature_context.h).
//
// Threading: every hook runs on the controller's loop thread; nothing here
// is thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "absl/status/status.h"
#include "common/clock.h"
#include "daemon/scheduler/scheduler_types.h"
#include "gantry/v1/agent.pb.h"
#include "gantry/v1/client.pb.h"
#include "gantry/v1/types.pb.h"

namespace gantry {

class ControllerFeature;
class ControllerMetrics;

// What a feature may read of the controller, and the few things it may
// ask of the core. A request goes through the core's own rules (a drain is
// staged and logged as an admin's would be; a restart is the job's usual
// requeue), so a feature never writes a record itself.
class FeatureContext {
 public:
  virtual ~FeatureContext() = default;
  virtual const Clock& clock() const = 0;
  // Where metrics go; null when the controller reports none (unit tests).
  virtual ControllerMetrics* metrics() const = 0;
  // The controller's loop, for a feature's own timers (their handlers run
  // on the loop thread like every hook).
  virtual boost::asio::io_context& io() = 0;
  // Every job in the live state (pending, running and recently finished).
  virtual void ForEachJob(
      const std::function<void(const v1::JobRecord&)>& visit) const = 0;
  // The jobs that are pending, running or still hold nodes.
  virtual void ForEachLiveJob(
      const std::function<void(const v1::JobRecord&)>& visit) const = 0;
  // The job in the live state; null when there is none.
  virtual const v1::JobRecord* FindJob(uint64_t job_id) const = 0;
  // Whether the job's ranks (or their stopping) still occupy `node`.
  virtual bool JobOccupies(uint64_t job_id, const std::string& node) const = 0;
  // The node's record (name, address, state); null when there is none.
  virtual const v1::NodeRecord* FindNode(const std::string& node) const = 0;
  // Whether the node's agent is connected now (a message can reach it).
  virtual bool NodeConnected(const std::string& node) const = 0;
  // Every node in name order: its record, whether its agent is connected,
  // and what the agent last reported its dataset cache holds (empty
  // before it has).
  virtual void ForEachNode(
      const std::function<void(const v1::NodeRecord&, bool connected,
                               const v1::DatasetCacheReport&)>& visit)
      const = 0;
  // This cluster's random id (stored with its state; ports derive from it).
  virtual uint64_t cluster_id() const = 0;
  // When this controller process started (wall clock): what a record
  // dated before it was begun by an earlier one.
  virtual int64_t started_ms() const = 0;
  // How many of `nodes`, in their order, the running job could restart
  // without right now: the scheduler's own test (free nodes meeting its
  // node list, constraints, size and switch span, with what the job holds
  // given back), dropping the last of them until a placement exists.
  virtual size_t RestartableWithout(
      uint64_t job_id, const std::vector<std::string>& nodes) const = 0;
  // Whether `count` more nodes are free now for the running job beside its
  // own: a job of that many nodes, with everything the job asks of its
  // nodes, on none of the job's nodes nor the hot spares, within the
  // fabric part of the job's first node, placed as the scheduler would.
  virtual bool NodesFreeBeside(uint64_t job_id, uint32_t count) const = 0;

  // The job's event log gains an entry (gantry job, sacct's comments).
  virtual void RecordEvent(uint64_t job_id, const std::string& node,
                           const std::string& kind,
                           const std::string& detail) = 0;
  // The running job made progress (its hang timer restarts; its attempt's
  // first progress is timed), with a new checkpoint when `checkpoint`
  // (its attempt's first checkpoint is timed).
  virtual void NoteJobProgress(uint64_t job_id, bool checkpoint) = 0;
  // Drains the node for `reason` unless it is drained already; false when
  // there is no such node.
  virtual bool DrainNode(const std::string& node,
                         const std::string& reason) = 0;
  // The job's reason and its detail (squeue's REASON, scontrol's Reason).
  virtual void SetJobReason(uint64_t job_id, const std::string& reason,
                            const std::string& detail) = 0;
  // Edits the job's current attempt record: the fields a feature keeps
  // there (the pre-flight's), staged with the job.
  virtual void UpdateCurrentAttempt(
      uint64_t job_id, const std::function<void(v1::AttemptRecord&)>& edit) = 0;
  // Edits the job's record: only the fields a feature keeps there (the
  // in-memory checkpoint's), never its state or allocation; staged with
  // the job.
  virtual void UpdateJob(uint64_t job_id,
                         const std::function<void(v1::JobRecord&)>& edit) = 0;
  // The same for fields that may go unstored until the job's next staged
  // change (what every node of a gang reports every few seconds, such as
  // dataset staging progress): a crash loses at most their latest values.
  virtual void UpdateJobUnstaged(
      uint64_t job_id, const std::function<void(v1::JobRecord&)>& edit) = 0;
  // Runs `action` on the loop once what is staged now is durable (what a
  // node is told must not run ahead of the state that explains it).
  virtual void AfterCommit(std::function<void()> action) = 0;
  // The leaf switches `node` hangs off in the switch tree; empty without a
  // tree, or when the node is not in it.
  virtual std::vector<std::string> LeafSwitchesOf(
      const std::string& node) const = 0;
  // Sends a message to the node's agent; false when it is not connected.
  virtual bool SendToNode(const std::string& node,
                          const v1::ControllerMessage& message) = 0;
  // A launch a feature held (HoldLaunch) goes out, once what is staged
  // now is durable; the job's reason is cleared and its hang timeout
  // counts from now.
  virtual void ReleaseLaunch(uint64_t job_id) = 0;
  // Ends the running job's attempt, whose ranks never started, and queues
  // the job again uncharged (its attempt ends with `detail`), held for a
  // person when `hold`, showing `reason` and `reason_detail` meanwhile.
  virtual void RequeueUnstarted(uint64_t job_id, const std::string& detail,
                                bool hold, const std::string& reason,
                                const std::string& reason_detail) = 0;
  // Asks for a scheduling pass soon: something a pending job waited for
  // changed.
  virtual void RequestSchedule() = 0;
  // Calls `feature`'s OnWake in `delay_ms` (on the loop); a later call
  // replaces the wake not yet due. Never once the controller stops.
  virtual void WakeAfter(ControllerFeature& feature, int64_t delay_ms) = 0;
  // Restarts the running job from its latest checkpoint as gantryd's
  // choice: not charged against --max-restarts; the attempt ends with
  // `end_reason` (sacct's Reason; empty: a requeue's) and `detail`.
  virtual absl::Status RestartUncharged(uint64_t job_id,
                                        const std::string& end_reason,
                                        const std::string& detail) = 0;
};

// What a feature may say of a pending job about to join a scheduling pass
// (ControllerFeature::LimitPlacement).
struct PlacementLimits {
  // Nodes it must not be placed on this pass: add to them.
  std::vector<std::string>* excluded = nullptr;
  // Kept out of this pass; `reason` and `detail` say why (squeue's
  // REASON; in memory, not stored).
  bool held = false;
  std::string reason;
  std::string detail;
};

class ControllerFeature {
 public:
  virtual ~ControllerFeature() = default;

  // The state was loaded at start (every job is in the context by now).
  // `retired`: what jobs already moved to the history left behind, as last
  // stored (null: nothing stored yet).
  virtual void OnStateLoaded(const v1::FairShareRecord* /*retired*/) {}
  // A job's record changed; the change is staged for the next commit.
  virtual void OnJobChanged(const v1::JobRecord& /*job*/) {}
  // A job reached a terminal state (once per job).
  virtual void OnJobFinished(const v1::JobRecord& /*job*/) {}
  // A finished job leaves the live state for the history; its record is
  // still whole here.
  virtual void OnJobRetired(const v1::JobRecord& /*job*/) {}
  // The record of what retired jobs left behind is about to be stored
  // (after OnJobRetired calls): add this feature's part.
  virtual void SaveRetired(v1::FairShareRecord& /*retired*/) {}
  // Every controller tick (a quarter of a second); `tick` counts from 1.
  virtual void OnTick(uint64_t /*tick*/) {}
  // gantry status: add this feature's figures.
  virtual void FillStatus(v1::ClusterStatusResponse& /*status*/) const {}
  // gantry job / scontrol show job: add what this feature knows of the job
  // (in the live state).
  virtual void FillJob(const v1::JobRecord& /*job*/,
                       v1::GetJobResponse& /*reply*/) const {}
  // A node's heartbeat (after the core has taken what it keeps of it).
  virtual void OnHeartbeat(const std::string& /*node*/,
                           const v1::Heartbeat& /*heartbeat*/) {}
  // A rank's or the job's progress report (`gantry progress`), before its
  // checkpoint, if any, is recorded: an error refuses the report.
  virtual absl::Status OnProgressReport(
      const v1::JobRecord& /*job*/,
      const v1::ReportProgressRequest& /*report*/) {
    return absl::OkStatus();
  }
  // The running job recorded a new checkpoint (staged already).
  virtual void OnCheckpoint(const v1::JobRecord& /*job*/) {}
  // An agent registered (again): its registration as sent. The node is up
  // and connected, and has been welcomed; its ranks are not reconciled yet.
  virtual void OnNodeRegistered(const std::string& /*node*/,
                                const v1::Register& /*registration*/) {}
  // The node's agent stream ended: it is unreachable until it registers
  // again (or is found down).
  virtual void OnNodeDisconnected(const std::string& /*node*/) {}
  // Any message from a node's agent after its registration, before the
  // core handles it.
  virtual void OnHeardFrom(const std::string& /*node*/) {}
  // A message from an agent, after the core took its heartbeat and
  // checkpoint report, before it handles a rank event or a dataset
  // answer (the core may end a job's attempt for that event after this).
  virtual void OnAgentMessage(const std::string& /*node*/,
                              const v1::AgentMessage& /*message*/) {}
  // A job's attempt started: its nodes are taken, its launch not yet sent
  // (staged, not yet durable).
  virtual void OnJobStarted(const v1::JobRecord& /*job*/) {}
  // The job's launch is about to go out (`whole`: to every node; else to
  // one node or share again): true holds it back, and the feature sends
  // it later (ReleaseLaunch) or ends the attempt (RequeueUnstarted).
  virtual bool HoldLaunch(const v1::JobRecord& /*job*/, bool /*whole*/) {
    return false;
  }
  // A launch of the job's ranks (or of a step's tasks) on `node` is being
  // built: add this feature's fields.
  virtual void FillLaunch(const v1::JobRecord& /*job*/,
                          const std::string& /*node*/,
                          v1::LaunchRanks& /*launch*/) const {}
  // At each deadline check of a running job: true while this feature holds
  // its ranks back (the core then does not time its hang). It may act
  // here (send again what a controller restart lost).
  virtual bool HoldsRanks(const v1::JobRecord& /*job*/) { return false; }
  // A node of the running job was found down: true when this feature takes
  // the loss (the core then does not fail the job for it).
  virtual bool OnNodeLost(const v1::JobRecord& /*job*/,
                          const std::string& /*node*/) {
    return false;
  }
  // A node was found down (its heartbeats stopped, or its agent's stream
  // ended for good): true when it failed under work this feature knows of
  // (the core then drains it, as a node that died under a job). Every
  // feature is told. `was_up`: it was up until now (not unreachable since
  // a controller restart, when it failed is unknown).
  virtual bool OnNodeDown(const std::string& /*node*/, bool /*was_up*/) {
    return false;
  }
  // The job's attempt failed (its record still names the attempt's nodes);
  // `node_fault_restart`: for a node fault, and the job runs again.
  virtual void OnAttemptFailed(const v1::JobRecord& /*job*/,
                               bool /*node_fault_restart*/) {}
  // A pending job is about to join this scheduling pass
  // (`sized_by_range`: its size is chosen at placement, from a node
  // range). Runs for every queued job on every pass: return at once when
  // the job is none of this feature's.
  virtual void LimitPlacement(const v1::JobRecord& /*job*/,
                              bool /*sized_by_range*/,
                              PlacementLimits& /*limits*/) {}
  // A scheduling pass reserved nodes for jobs that wait (backfill's
  // reservations: when each is expected to start, and where;
  // `node_names[id]` names NodeId id). Empty when nothing was queued.
  virtual void OnReservations(
      const std::vector<Reservation>& /*reservations*/,
      const std::vector<const std::string*>& /*node_names*/) {}
  // A scheduling pass has run: its starts are staged.
  virtual void AfterSchedulingPass() {}
  // The wake this feature asked for is due (FeatureContext::WakeAfter).
  virtual void OnWake() {}
  // The controller stops: answer what waits on this feature (its calls
  // must still finish) and cancel its timers.
  virtual void OnStop() {}
};

// The registered features, in the order their hooks are called.
using FeatureList = std::vector<std::unique_ptr<ControllerFeature>>;

// Makes a feature for a controller; `context` outlives it.
using FeatureFactory =
    std::function<std::unique_ptr<ControllerFeature>(FeatureContext&)>;

}  // namespace gantry
