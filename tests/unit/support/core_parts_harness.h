// The parts of the controller's core that its classes are given (the loop,
// the in-memory store, a fake clock, the tables, the group commit, the
// pass pacer, the statistics, no features), without a Controller: for the
// unit tests of one core class at a time. Nodes are added with a link that
// keeps what they are sent.
//
// Not thread-safe: the test's thread runs the loop.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include "common/clock.h"
#include "daemon/controller/core/agent_link.h"
#include "daemon/controller/core/allocation_liveness.h"
#include "daemon/controller/core/cluster_state.h"
#include "daemon/controller/core/commit_pipeline.h"
#include "daemon/controller/core/controller_feature.h"
#include "daemon/controller/core/controller_options.h"
#include "daemon/controller/core/controller_statistics.h"
#include "daemon/controller/core/job_lifecycle.h"
#include "daemon/controller/core/node_administration.h"
#include "daemon/controller/core/pass_pacer.h"
#include "tests/unit/support/memory_store.h"

namespace gantry {

// An agent's stream that keeps every message it is sent.
class RecordingLink final : public AgentLink {
 public:
  void Send(const v1::ControllerMessage& message) override {
    sent.push_back(message);
  }
  void Close() override { closed = true; }
  void Close(const absl::Status& why) override {
    closed = true;
    close_status = why;
  }
  std::string Peer() const override { return "recording"; }

  std::vector<v1::ControllerMessage> sent;
  bool closed = false;
  absl::Status close_status;
};

struct CoreParts {
  // Adds an idle node with `gpus` GPUs, connected through a recording link.
  NodeRuntime& AddNode(const std::string& name, uint32_t gpus = 0) {
    NodeRuntime& node = state.nodes[name];
    node.record.set_name(name);
    node.record.set_address("192.0.2.1");
    node.record.set_state(v1::NODE_UP);
    node.record.add_partitions("main");
    v1::NodeInventory& inventory = *node.record.mutable_inventory();
    inventory.set_cpus(8);
    inventory.set_memory_mb(16'000);
    for (uint32_t i = 0; i < gpus; ++i) {
      inventory.add_gpus()->set_index(i);
    }
    auto link = std::make_shared<RecordingLink>();
    links[name] = link;
    node.link = link;
    state.link_nodes[link.get()] = &node;
    return node;
  }

  // Adds a job in `state` with the given spec (id from the table's
  // counter), indexed as the controller indexes it.
  JobRuntime& AddJob(const v1::JobSpec& spec,
                     v1::JobState job_state = v1::PENDING) {
    const uint64_t id = state.next_job_id++;
    JobRuntime& job = state.jobs[id];
    job.record.set_id(id);
    job.record.set_user("alice");
    job.record.set_uid(1000);
    job.record.set_gid(1000);
    job.record.set_state(job_state);
    job.record.set_submit_time_ms(clock.NowMs());
    *job.record.mutable_spec() = spec;
    state.Reindex(job);
    return job;
  }

  // These parts, as a JobLifecycle is given them.
  JobLifecycle::Parts LifecycleParts() {
    return {.io = io,
            .store = store,
            .clock = clock,
            .options = options,
            .state = state,
            .commits = commits,
            .passes = passes,
            .statistics = statistics,
            .allocation_liveness = allocation_liveness,
            .features = features};
  }

  // These parts and `lifecycle`, as a NodeAdministration is given them.
  NodeAdministration::Parts NodeAdministrationParts(JobLifecycle& lifecycle) {
    return {.clock = clock,
            .options = options,
            .state = state,
            .commits = commits,
            .passes = passes,
            .lifecycle = lifecycle,
            .features = features};
  }

  // Runs what is ready on the loop (the store writer's completions among
  // it) until `done` holds, for at most about five seconds.
  bool PumpUntil(const std::function<bool()>& done) {
    for (int i = 0; i < 250 && !done(); ++i) {
      io.run_for(std::chrono::milliseconds(20));
      io.restart();
    }
    return done();
  }
  // Until everything staged so far is written and its actions have run.
  bool Flush() {
    bool written = false;
    commits.AfterCommit([&written] { written = true; });
    return PumpUntil([&written] { return written; });
  }

  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type>
      work = boost::asio::make_work_guard(io);
  MemoryStore store;
  FakeClock clock;
  ControllerOptions options;
  ClusterState state;
  ControllerStatistics statistics;
  AllocationLiveness allocation_liveness{0};
  FeatureList features;
  std::map<std::string, std::shared_ptr<RecordingLink>> links;
  int passes_run = 0;
  CommitPipeline commits{
      io,
      store,
      clock,
      nullptr,
      {.find_job = [this](uint64_t id) { return state.FindJobRecord(id); },
       .find_node =
           [this](const std::string& name) {
             return state.FindNodeRecord(name);
           },
       .on_job_staged = [](const v1::JobRecord&) {},
       .on_event_staged = [](const v1::EventRecord&) {}}};
  PassPacer passes{io,
                   clock,
                   {.may_act = nullptr,
                    .run_pass = [this] { ++passes_run; },
                    .pass_done = [](int64_t) {}}};
};

}  // namespace gantry
