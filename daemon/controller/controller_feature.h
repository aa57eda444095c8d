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

#include "absl/status/status.h"
#include "common/clock.h"
#include "gantry/v1/agent.pb.h"
#include "gantry/v1/client.pb.h"
#include "gantry/v1/types.pb.h"

namespace gantry {

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
  // How many of `nodes`, in their order, the running job could restart
  // without right now: the scheduler's own test (free nodes meeting its
  // node list, constraints, size and switch span, with what the job holds
  // given back), dropping the last of them until a placement exists.
  virtual size_t RestartableWithout(
      uint64_t job_id, const std::vector<std::string>& nodes) const = 0;

  // The job's event log gains an entry (gantry job, sacct's comments).
  virtual void RecordEvent(uint64_t job_id, const std::string& node,
                           const std::string& kind,
                           const std::string& detail) = 0;
  // The running job made progress (its hang timer restarts; its attempt's
  // first progress is timed).
  virtual void NoteJobProgress(uint64_t job_id) = 0;
  // Drains the node for `reason` unless it is drained already; false when
  // there is no such node.
  virtual bool DrainNode(const std::string& node,
                         const std::string& reason) = 0;
  // Restarts the running job from its latest checkpoint as gantryd's
  // choice: not charged against --max-restarts; the attempt ends with
  // `end_reason` (sacct's Reason).
  virtual absl::Status RestartUncharged(uint64_t job_id,
                                        const std::string& end_reason,
                                        const std::string& detail) = 0;
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
};

// Makes a feature for a controller; `context` outlives it.
using FeatureFactory =
    std::function<std::unique_ptr<ControllerFeature>(FeatureContext&)>;

}  // namespace gantry
