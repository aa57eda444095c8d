// What the controller holds of each node and each job: the stored record
// and, beside it, what lives only in memory (its agent's stream, the
// shares placed on it; a job's live ranks, step waiters, clocks and
// plans). Kept apart from controller.h because these are plain data that
// every concern of the Controller reads, not part of its interface.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "common/node_constraint.h"
#include "daemon/controller/core/agent_link.h"
#include "daemon/controller/core/scheduling_input.h"
#include "gantry/v1/agent.pb.h"
#include "gantry/v1/types.pb.h"

namespace gantry {

struct NodeRuntime {
  v1::NodeRecord record;
  std::shared_ptr<AgentLink> link;
  // DOWN if not heard from by then (monotonic: MonotonicMs(clock_)).
  int64_t deadline_ms = 0;
  NodeUsage usage;  // the shares of the jobs placed here
  // What the agent last reported its dataset cache holds (in memory: an
  // agent reports it again when it registers).
  v1::DatasetCacheReport dataset_cache;
};
struct JobRuntime {
  v1::JobRecord record;
  std::map<std::string, uint32_t> live_ranks;  // node -> ranks not exited
  // Nodes whose share of the allocation is still counted as in use:
  // from the start until the attempt's ranks there are gone.
  std::set<std::string> occupied_nodes;
  std::set<uint32_t> exited_ranks;
  double priority = 0;  // of the last scheduling pass, while pending
  // Where the last pass's backfill reservation expects it to start
  // (0: not reserved), for squeue --start.
  int64_t expected_start_ms = 0;
  // sstat: the latest measurement of the running attempt, by node (in
  // memory only; see RecordUsage).
  std::map<std::string, v1::JobUsageSample> usage;
  // Running steps: who waits for their end (gantry run), and when their
  // first task ended (for --wait). In memory: a waiter asks again after
  // a controller restart.
  std::map<uint32_t,
           std::vector<std::function<void(absl::StatusOr<v1::StepRecord>)>>>
      step_waiters;
  std::map<uint32_t, int64_t> step_first_exit_ms;  // monotonic
  // The spec's --constraint, parsed on first need (ParsedConstraint).
  std::shared_ptr<const NodeConstraint> constraint;
  // Ranks of the current attempt reported started, until all have been
  // (AttemptRecord.ranks_running_ms; in memory only).
  std::set<uint32_t> started_ranks;
  // Time since record.start_time_ms and record.last_progress_ms, for the
  // time limit and the hang timeout: on the monotonic clock, so a step of
  // the wall clock neither times a job out nor extends it.
  SteadyElapsed running_for;
  SteadyElapsed quiet_for;
};

}  // namespace gantry
