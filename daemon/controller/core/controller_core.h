// The controller's core, assembled: the tables and the classes that work
// on them (controller.h lists them), each given the parts it needs and
// wired to the others here, in one place. It holds no logic of its own;
// the Controller, the facade the rpc layer calls, starts and stops it and
// answers requests through it, and the features hear of it through their
// hooks.
//
// Threading: the controller's loop only.
#pragma once

#include <cstdint>

#include <boost/asio/io_context.hpp>

#include "common/clock.h"
#include "daemon/controller/core/agent_protocol.h"
#include "daemon/controller/core/allocation_liveness.h"
#include "daemon/controller/core/cluster_state.h"
#include "daemon/controller/core/commit_pipeline.h"
#include "daemon/controller/core/controller_feature.h"
#include "daemon/controller/core/controller_options.h"
#include "daemon/controller/core/controller_statistics.h"
#include "daemon/controller/core/history_worker.h"
#include "daemon/controller/core/job_lifecycle.h"
#include "daemon/controller/core/job_retention.h"
#include "daemon/controller/core/job_steps.h"
#include "daemon/controller/core/job_submission.h"
#include "daemon/controller/core/job_timers.h"
#include "daemon/controller/core/node_administration.h"
#include "daemon/controller/core/node_event_log.h"
#include "daemon/controller/core/node_silence.h"
#include "daemon/controller/core/pass_pacer.h"
#include "daemon/controller/core/scheduling_pass.h"
#include "daemon/controller/core/switch_tree.h"
#include "daemon/controller/core/utilization_sampler.h"
#include "daemon/store/state_store.h"

namespace gantry {

struct ControllerCore {
  // Every reference outlives the core; `features` may still be empty (the
  // features are made once the core exists) and `history_worker` is joined
  // before the core goes. `tick_interval_ms`: how often the tick runs.
  ControllerCore(boost::asio::io_context& io, StateStore& store,
                 const Clock& clock, const ControllerOptions& options,
                 const FeatureList& features, HistoryWorker& history_worker,
                 int64_t tick_interval_ms);
  ControllerCore(const ControllerCore&) = delete;
  ControllerCore& operator=(const ControllerCore&) = delete;

  ClusterState state;               // the jobs and nodes
  ControllerStatistics statistics;  // for sdiag
  NodeEventLog node_events;         // recent node events, for status
  // Deadlines of the interactive allocations' clients, in memory only
  // (Start gives them a grace period).
  AllocationLiveness allocation_liveness;
  CommitPipeline commits;  // the group commit
  // When scheduling passes run: asks coalesced, passes kept to about a
  // fifth of the loop, none while leadership is unsure.
  PassPacer passes;
  SwitchTree switch_tree;
  UtilizationSampler utilization;  // GPU use over time, for status
  JobLifecycle lifecycle;
  SchedulingPass scheduling;
  JobRetention retention;
  JobSubmission submission;
  JobSteps steps;
  NodeAdministration nodes;
  AgentProtocol agents;
  NodeSilence node_silence;
  JobTimers job_timers;
};

}  // namespace gantry
