// The answer to `gantry status`, built from what the controller holds: the
// node listing (with live allocations), the jobs, the recent node events and
// the GPU utilization history. Pure functions of their arguments (no clock,
// no I/O), so they are tested apart from the controller; thread-safe (no
// state). The controller adds what only it knows (version, uptime, state
// size, commit latencies) in controller_status.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "daemon/controller/core/utilization_history.h"
#include "gantry/v1/client.pb.h"

namespace gantry {

struct ClusterStatusInput {
  int64_t now_ms = 0;
  // As Controller::ListNodes gives them: cpus/gpus/mem_allocated filled in.
  std::vector<const v1::NodeRecord*> nodes;
  std::vector<const v1::JobRecord*> jobs;
  // Oldest first (NodeEventLog::Events).
  std::vector<v1::EventRecord> node_events;
  const UtilizationHistory* utilization = nullptr;  // null: no series
  size_t recent_limit = 20;  // at most this many recent_failures
};

// Everything but the controller's own health fields (version, started_ms,
// state_dir, state size, commit latencies, next_job_id, jobs_finished).
v1::ClusterStatusResponse BuildClusterStatus(const ClusterStatusInput& input);

// What a node can do now, the first that applies: "down", "unreachable",
// "degraded" (health problems), "drained", "allocated" (every CPU, or every
// GPU of a GPU node, allocated), "mixed" (something allocated), "idle".
std::string_view NodeStatusWord(const v1::NodeRecord& node);

// The reasons pending jobs wait for ("None" when a job has none yet), most
// common first, then by name; each with the detail of its lowest job id.
std::vector<v1::ReasonCount> CountPendingReasons(
    const std::vector<const v1::JobRecord*>& jobs);

// Failed job attempts (job_restarted when the restart policy brought the
// job back, else job_failed) and node events (node_down, node_degraded,
// node_drained; a drain staged by the same fault as a node_down or
// node_degraded event moments before or after is left out as a
// repetition), newest first, at most `limit`. An attempt failed unless it
// completed or was cancelled.
std::vector<v1::StatusEvent> RecentFailures(
    const std::vector<const v1::JobRecord*>& jobs,
    const std::vector<v1::EventRecord>& node_events, size_t limit);

}  // namespace gantry
