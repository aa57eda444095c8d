// sprio, sshare and sdiag: the priority factors of the pending jobs, the
// fair-share usage per user and the controller's counters.
#pragma once

#include <cstdint>

#include "daemon/controller/core/cluster_state.h"
#include "daemon/controller/core/controller_statistics.h"
#include "daemon/scheduler/priority.h"
#include "gantry/v1/client.pb.h"

namespace gantry {

struct SchedulerReportSources {
  const ClusterState& state;
  const FairShare& fair_share;  // with the retired jobs' usage
  const PriorityWeights& weights;
  const ControllerStatistics& statistics;
  int64_t started_ms = 0;  // when the controller started (wall clock)
};

// As of `now_ms`; the pending jobs highest priority first.
v1::SchedulerReportResponse SchedulerReport(
    const SchedulerReportSources& sources, int64_t now_ms);

}  // namespace gantry
