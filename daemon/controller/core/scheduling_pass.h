// The scheduling pass of the controller's core: picks the pending jobs
// that may start now (not held, eligible, dependencies met, array
// throttles, what the features allow), turns them and the nodes into the
// scheduler's input (scheduling_input.h), runs Schedule() and starts what
// it placed through the job lifecycle; the jobs left waiting get the
// scheduler's reason. When passes run is PassPacer's (pass_pacer.h).
//
// Threading: the controller's loop only.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/node_constraint.h"
#include "daemon/controller/core/cluster_state.h"
#include "daemon/controller/core/controller_feature.h"
#include "daemon/controller/core/controller_options.h"
#include "daemon/controller/core/controller_runtime.h"
#include "daemon/controller/core/job_lifecycle.h"
#include "daemon/controller/core/pass_pacer.h"
#include "daemon/controller/core/scheduling_input.h"
#include "daemon/controller/core/switch_tree.h"

namespace gantry {

// The job's --constraint, parsed once and kept on the job.
std::shared_ptr<const NodeConstraint> ParsedConstraint(JobRuntime& job);

class SchedulingPass {
 public:
  // What the pass works with; every reference outlives it.
  struct Parts {
    const Clock& clock;
    const ControllerOptions& options;
    ClusterState& state;
    JobLifecycle& lifecycle;  // starts what is placed; fair share
    PassPacer& passes;        // asked again when a start frees a dependency
    const SwitchTree& switch_tree;
    const FeatureList& features;
  };
  explicit SchedulingPass(Parts parts);
  SchedulingPass(const SchedulingPass&) = delete;
  SchedulingPass& operator=(const SchedulingPass&) = delete;

  // One pass (PassPacer calls it).
  void Run();
  // Every node as the scheduler sees it, and its name at the same index.
  std::vector<NodeSnapshot> NodeSnapshots(
      std::vector<const std::string*>& names) const;
  // True once `now_ms` has reached the time the last pass found the first
  // waiting job becomes eligible (a backoff, --begin, after+MIN): a pass is
  // due then. Resets until the next pass finds another.
  bool EligibleAgainBy(int64_t now_ms);

 private:
  // Throttled arrays (--array=...%N): how many more of their tasks may join
  // this pass's queue, by array id. Tasks are taken in id order, so the
  // lowest indices start first.
  using ArraySlots = std::map<uint64_t, uint32_t>;
  // What the pass does with a job before the scheduler sees it.
  enum class GateVerdict {
    kNotPending,         // not for this pass
    kWait,               // waits; its reason says why (held, backoff, ...)
    kWaitForDependency,  // waits on --dependency: look again after starts
    kQueue,              // goes into the scheduler's queue
  };
  // Sets the reason of a job that waits before the scheduler.
  GateVerdict Gate(JobRuntime& job, int64_t now, ArraySlots& array_slots);
  bool DependencyAllowsStart(JobRuntime& job, int64_t now);
  // What the running (and stopping) jobs hold, for backfill reservations.
  std::vector<RunningJob> RunningJobs(
      const std::vector<const std::string*>& node_names) const;
  // A waiting job becomes eligible at `at_ms`: the earliest is kept.
  void EligibleAt(int64_t at_ms);

  Parts parts_;
  // The pass's queue, kept for its memory (Run).
  std::vector<PendingJob> pending_queue_;
  // When the earliest waiting job becomes eligible (0: none waiting).
  int64_t next_eligible_ms_ = 0;
  // Per pass: (user, job name) -> the oldest active job of that pair, the
  // one that holds a --dependency=singleton. Built when needed.
  std::optional<std::map<std::pair<std::string, std::string>, uint64_t>>
      singleton_holders_;
};

}  // namespace gantry
