// The jobs' clocks, checked each tick: the time limit, --deadline (a
// pending job that can no longer end by it, or a running one that reached
// it), the hang timeout, sbatch --signal's warning, steps' --wait, and the
// interactive allocations whose client went quiet (InactiveLimit). All on
// the monotonic clock except what is a date (--deadline).
//
// Threading: the controller's loop only.
#pragma once

#include <cstdint>

#include "common/clock.h"
#include "daemon/controller/core/allocation_liveness.h"
#include "daemon/controller/core/cluster_state.h"
#include "daemon/controller/core/controller_feature.h"
#include "daemon/controller/core/job_lifecycle.h"
#include "daemon/controller/core/job_steps.h"

namespace gantry {

class JobTimers {
 public:
  // What it works with; every reference outlives it.
  struct Parts {
    const Clock& clock;
    ClusterState& state;
    JobLifecycle& lifecycle;
    JobSteps& steps;
    AllocationLiveness& allocation_liveness;
    const FeatureList& features;  // a feature may hold a job's ranks
  };
  explicit JobTimers(Parts parts);

  // One tick's check.
  void Check();

 private:
  // Ends the interactive allocations whose client has not been heard from
  // within the inactive limit.
  void EndSilentAllocations(int64_t monotonic_ms);

  Parts parts_;
};

}  // namespace gantry
