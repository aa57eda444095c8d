#include "daemon/controller/core/controller_core.h"

#include <string>

#include "daemon/controller/core/controller_metrics.h"

namespace gantry {

ControllerCore::ControllerCore(boost::asio::io_context& io, StateStore& store,
                               const Clock& clock,
                               const ControllerOptions& options,
                               const FeatureList& features,
                               HistoryWorker& history_worker,
                               int64_t tick_interval_ms)
    : allocation_liveness(options.inactive_limit_ms),
      commits(
          io, store, clock, options.metrics,
          {.find_job = [this](uint64_t id) { return state.FindJobRecord(id); },
           .find_node =
               [this](const std::string& name) {
                 return state.FindNodeRecord(name);
               },
           .on_job_staged =
               [&features](const v1::JobRecord& record) {
                 for (const auto& feature : features) {
                   feature->OnJobChanged(record);
                 }
               },
           .on_event_staged =
               [this](const v1::EventRecord& event) {
                 node_events.Observe(event);
               }}),
      passes(io, clock,
             {.may_act = options.may_act,
              .run_pass =
                  [this, &features] {
                    scheduling.Run();
                    for (const auto& feature : features) {
                      feature->AfterSchedulingPass();
                    }
                  },
              .pass_done =
                  [this, &clock, &options](int64_t duration_ns) {
                    statistics.SchedulingPass(duration_ns, clock.NowMs());
                    if (options.metrics) {
                      options.metrics->ObserveSchedulingPass(
                          static_cast<double>(duration_ns) / 1e9);
                    }
                  }}),
      switch_tree(clock, options, state, commits),
      utilization(io, clock, state),
      lifecycle({.io = io,
                 .store = store,
                 .clock = clock,
                 .options = options,
                 .state = state,
                 .commits = commits,
                 .passes = passes,
                 .statistics = statistics,
                 .allocation_liveness = allocation_liveness,
                 .features = features},
                {.end_open_steps =
                     [this](JobRuntime& job, const std::string& detail) {
                       steps.EndOpenSteps(job, detail);
                     }}),
      scheduling({.clock = clock,
                  .options = options,
                  .state = state,
                  .lifecycle = lifecycle,
                  .passes = passes,
                  .switch_tree = switch_tree,
                  .features = features}),
      retention({.io = io,
                 .store = store,
                 .clock = clock,
                 .options = options,
                 .state = state,
                 .commits = commits,
                 .history_worker = history_worker,
                 .features = features,
                 .on_retired =
                     [this](const v1::JobRecord& record) {
                       submission.OnJobRetired(record);
                     }}),
      submission({.clock = clock,
                  .options = options,
                  .state = state,
                  .commits = commits,
                  .passes = passes,
                  .statistics = statistics,
                  .allocation_liveness = allocation_liveness,
                  .switch_tree = switch_tree,
                  .scheduling = scheduling}),
      steps({.clock = clock,
             .options = options,
             .state = state,
             .commits = commits,
             .lifecycle = lifecycle,
             .features = features}),
      nodes({.clock = clock,
             .options = options,
             .state = state,
             .commits = commits,
             .passes = passes,
             .lifecycle = lifecycle,
             .features = features}),
      agents({.clock = clock,
              .options = options,
              .state = state,
              .commits = commits,
              .passes = passes,
              .lifecycle = lifecycle,
              .steps = steps,
              .nodes = nodes,
              .switch_tree = switch_tree,
              .features = features}),
      node_silence({.clock = clock,
                    .options = options,
                    .state = state,
                    .nodes = nodes,
                    .allocation_liveness = allocation_liveness,
                    .tick_interval_ms = tick_interval_ms}),
      job_timers({.clock = clock,
                  .state = state,
                  .lifecycle = lifecycle,
                  .steps = steps,
                  .allocation_liveness = allocation_liveness,
                  .features = features}) {}

}  // namespace gantry
