// The controller as one component, without processes or sockets: the real
// Controller on an io_context the test pumps, an in-memory store, a fake
// clock the test moves, and fake agent links that record (or drop) what the
// controller sends. Each case drives one path end to end: register and
// launch, a rank failure through backoff to a restart, a node whose
// heartbeats stop, a controller restart reconciling with its agents, and a
// launch lost in the crash window between the start's commit and its send.
#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include "common/clock.h"
#include "daemon/controller/controller.h"
#include "daemon/controller/core/agent_link.h"
#include "daemon/controller/features/standard_features.h"
#include "tests/unit/support/controller_harness.h"

namespace gantry {
namespace controller_component_test {

// An agent's stream as the controller sees it. Loop thread only.
class FakeAgentLink : public AgentLink {
 public:
  void Send(const v1::ControllerMessage& message) override {
    if (closed_) return;
    if (dropping_) {
      ++dropped_;
      return;
    }
    sent_.push_back(message);
  }
  void Close() override { closed_ = true; }
  void Close(const absl::Status&) override { closed_ = true; }
  std::string Peer() const override { return "fake"; }

  // Messages are lost from now on, as when the controller dies before they
  // leave.
  void DropEverything() { dropping_ = true; }

  std::vector<v1::LaunchRanks> Launches() const {
    std::vector<v1::LaunchRanks> launches;
    for (const v1::ControllerMessage& message : sent_) {
      if (message.has_launch()) launches.push_back(message.launch());
    }
    return launches;
  }
  int Probes() const {
    return static_cast<int>(std::count_if(
        sent_.begin(), sent_.end(),
        [](const v1::ControllerMessage& m) { return m.has_probe(); }));
  }
  bool closed() const { return closed_; }
  int dropped() const { return dropped_; }

 private:
  std::vector<v1::ControllerMessage> sent_;
  bool closed_ = false;
  bool dropping_ = false;
  int dropped_ = 0;
};

// A node's agent: its identity across reconnects, and its current stream.
struct FakeAgent {
  explicit FakeAgent(std::string node_name) : name(std::move(node_name)) {}
  std::string name;
  std::string instance = "instance-1";
  std::string boot_id = "boot-1";
  std::shared_ptr<FakeAgentLink> link;
  uint64_t next_sequence = 1;
};

// The features gantryd runs, with a node fault settling after `settle_ms`
// (agents beating every `heartbeat_ms`, as gantryd tells them both).
std::vector<FeatureFactory> FeaturesSettlingIn(int64_t settle_ms,
                                               int64_t heartbeat_ms = 1000) {
  FeatureSettings settings;
  settings.fault_survivors.settle_ms = settle_ms;
  settings.fault_survivors.heartbeat_interval_ms = heartbeat_ms;
  return StandardFeatures(settings);
}

ControllerOptions ComponentOptions() {
  ControllerOptions options;
  options.node_timeout_ms = 1000;
  options.restart_backoff_ms = 1000;
  options.reconnect_grace_ms = 60'000;
  options.features = FeaturesSettlingIn(300);
  return options;
}

class Harness : public ControllerHarness {
 public:
  Harness() : ControllerHarness(ComponentOptions()) {}
  explicit Harness(const ControllerOptions& options)
      : ControllerHarness(options) {}

  // Registers (or re-registers) `agent` on a fresh stream, saying it runs
  // `running`.
  void Register(FakeAgent& agent, const std::vector<v1::RankId>& running = {}) {
    agent.link = std::make_shared<FakeAgentLink>();
    v1::AgentMessage message;
    v1::Register& reg = *message.mutable_register_();
    reg.set_node_name(agent.name);
    reg.set_address("192.0.2." + agent.name.substr(1));
    reg.set_boot_id(agent.boot_id);
    reg.set_agent_instance(agent.instance);
    reg.set_agent_version("test");
    v1::NodeInventory& inventory = *reg.mutable_inventory();
    inventory.set_cpus(8);
    inventory.set_memory_mb(16'000);
    for (uint32_t i = 0; i < 2; ++i) inventory.add_gpus()->set_index(i);
    for (const v1::RankId& rank : running) *reg.add_running() = rank;
    controller_->OnAgentMessage(agent.link, message);
    Pump();
  }

  void Heartbeat(FakeAgent& agent) {
    v1::AgentMessage message;
    message.mutable_heartbeat();
    controller_->OnAgentMessage(agent.link, message);
  }

  void RankExited(FakeAgent& agent, const v1::LaunchRanks& launch,
                  int exit_code) {
    v1::AgentMessage message;
    v1::RankEvent& event = *message.mutable_rank_event();
    event.set_sequence(agent.next_sequence++);
    event.set_kind(v1::RankEvent::EXITED);
    event.mutable_rank()->set_job_id(launch.job_id());
    event.mutable_rank()->set_attempt(launch.attempt());
    event.mutable_rank()->set_rank(launch.ranks(0).rank());
    event.set_exit_code(exit_code);
    controller_->OnAgentMessage(agent.link, message);
  }

  void RankStarted(FakeAgent& agent, const v1::LaunchRanks& launch) {
    v1::AgentMessage message;
    v1::RankEvent& event = *message.mutable_rank_event();
    event.set_kind(v1::RankEvent::STARTED);
    event.mutable_rank()->set_job_id(launch.job_id());
    event.mutable_rank()->set_attempt(launch.attempt());
    event.mutable_rank()->set_rank(launch.ranks(0).rank());
    controller_->OnAgentMessage(agent.link, message);
    Pump();
  }

  // gantry progress (empty path) or gantry checkpoint, from the job.
  void ReportProgress(uint64_t id, const std::string& checkpoint,
                      int64_t step) {
    v1::ReportProgressRequest request;
    request.set_job_id(id);
    request.set_checkpoint_path(checkpoint);
    request.set_step(step);
    std::optional<absl::Status> reported;
    controller_->ReportProgress(
        request, kAlice, [&](absl::Status status) { reported = status; });
    REQUIRE(PumpUntil([&] { return reported.has_value(); }));
    REQUIRE(reported->ok());
  }

  uint64_t Submit(uint32_t gpus_per_node, uint32_t nodes = 1) {
    v1::SubmitRequest submit;
    v1::JobSpec& spec = *submit.mutable_spec();
    spec.set_nodes(nodes);
    spec.set_name("train");
    spec.set_script("#!/bin/sh\ntrain\n");
    spec.set_working_dir("/tmp");
    spec.set_gpus_per_node(gpus_per_node);
    spec.set_max_restarts(3);
    std::optional<absl::StatusOr<JobId>> submitted;
    controller_->Submit(submit, kAlice,
                        [&](absl::StatusOr<JobId> id) { submitted = id; });
    REQUIRE(PumpUntil([&] { return submitted.has_value(); }));
    INFO(submitted->status().ToString());
    REQUIRE(submitted->ok());
    return (*submitted)->value();
  }

  v1::JobRecord Job(uint64_t id) {
    absl::StatusOr<v1::GetJobResponse> job =
        controller_->GetJob(JobId(id), kRoot);
    REQUIRE(job.ok());
    return job->job();
  }

  v1::NodeRecord Node(const std::string& name) {
    const v1::ListNodesResponse nodes = controller_->ListNodes();
    for (const v1::NodeRecord& node : nodes.nodes()) {
      if (node.name() == name) return node;
    }
    FAIL("no node " << name);
    return {};
  }

  // Lets the periodic timer (every 250 ms of real time) run while the fake
  // clock moves 200 ms per step, so the controller never takes the test for
  // a stalled loop; `each_step` runs first in every step (the heartbeats of
  // the agents that are alive). Stops early once `done` holds.
  bool Tick(int steps, const std::function<bool()>& done,
            const std::function<void()>& each_step) {
    for (int i = 0; i < steps && !done(); ++i) {
      each_step();
      clock_.AdvanceMs(200);
      io_.run_for(std::chrono::milliseconds(260));
      io_.restart();
    }
    return done();
  }
};

v1::RankId RankOf(const v1::LaunchRanks& launch) {
  v1::RankId rank;
  rank.set_job_id(launch.job_id());
  rank.set_attempt(launch.attempt());
  rank.set_rank(launch.ranks(0).rank());
  return rank;
}

TEST_CASE("a registered node gets the launch of a job placed on it",
          "[controller][component]") {
  Harness h;
  FakeAgent n1("n1");
  h.Register(n1);
  const uint64_t id = h.Submit(/*gpus_per_node=*/2);
  REQUIRE(h.PumpUntil([&] { return !n1.link->Launches().empty(); }));

  const v1::LaunchRanks launch = n1.link->Launches().front();
  CHECK(launch.job_id() == id);
  CHECK(launch.attempt() == 1);
  REQUIRE(launch.ranks_size() == 1);
  // The agent gets the GPUs as numbers; the environment says the same.
  CHECK(std::vector<uint32_t>(launch.ranks(0).gpu_indices().begin(),
                              launch.ranks(0).gpu_indices().end()) ==
        std::vector<uint32_t>{0, 1});
  CHECK(launch.ranks(0).environment().at("CUDA_VISIBLE_DEVICES") == "0,1");
  CHECK(h.Job(id).state() == v1::RUNNING);
}

TEST_CASE("a failed rank is restarted after its backoff, not before",
          "[controller][component]") {
  Harness h;
  FakeAgent n1("n1");
  h.Register(n1);
  const uint64_t id = h.Submit(1);
  REQUIRE(h.PumpUntil([&] { return n1.link->Launches().size() == 1; }));

  const int64_t failed_at = h.clock_.NowMs();
  h.RankExited(n1, n1.link->Launches().front(), 3);
  REQUIRE(h.PumpUntil([&] { return h.Job(id).state() == v1::PENDING; }));
  CHECK(h.Job(id).reason() == "Restarting");
  // Real time passes, the fake clock does not: still backing off.
  for (int i = 0; i < 20; ++i) h.Pump();
  CHECK(n1.link->Launches().size() == 1);

  REQUIRE(h.Tick(
      20, [&] { return n1.link->Launches().size() == 2; },
      [&] { h.Heartbeat(n1); }));
  CHECK(h.clock_.NowMs() - failed_at >= h.options_.restart_backoff_ms);
  CHECK(n1.link->Launches().back().attempt() == 2);
  const v1::JobRecord job = h.Job(id);
  CHECK(job.state() == v1::RUNNING);
  REQUIRE(job.attempts_size() == 2);
  CHECK(job.attempts(0).end_reason() == "NonZeroExitCode");
}

TEST_CASE(
    "a node whose heartbeats stop goes down, is drained, and its job "
    "restarts elsewhere",
    "[controller][component]") {
  Harness h;
  FakeAgent n1("n1"), n2("n2");
  h.Register(n1);
  h.Register(n2);
  const uint64_t id = h.Submit(2);
  REQUIRE(h.PumpUntil([&] {
    return n1.link->Launches().size() + n2.link->Launches().size() == 1;
  }));
  FakeAgent& lost = n1.link->Launches().empty() ? n2 : n1;
  FakeAgent& alive = &lost == &n1 ? n2 : n1;

  // Only the other node keeps beating.
  REQUIRE(h.Tick(
      30, [&] { return !alive.link->Launches().empty(); },
      [&] { h.Heartbeat(alive); }));
  const v1::NodeRecord down = h.Node(lost.name);
  CHECK(down.state() == v1::NODE_DOWN);
  CHECK(down.drained());
  CHECK(lost.link->closed());
  CHECK(h.Node(alive.name).state() == v1::NODE_UP);
  const v1::JobRecord job = h.Job(id);
  CHECK(job.state() == v1::RUNNING);
  REQUIRE(job.attempts_size() == 2);
  CHECK(job.attempts(0).node_fault());
  CHECK(job.attempts(1).nodes(0) == alive.name);
}

TEST_CASE(
    "most agents silent at once are given the reconnect grace before they go "
    "down",
    "[controller][component]") {
  ControllerOptions options = ComponentOptions();
  options.reconnect_grace_ms = 4000;
  Harness h(options);
  FakeAgent n1("n1"), n2("n2"), n3("n3");
  std::vector<FakeAgent*> agents = {&n1, &n2, &n3};
  for (FakeAgent* agent : agents) h.Register(*agent);
  const auto all_beat = [&] {
    for (FakeAgent* agent : agents) h.Heartbeat(*agent);
  };
  const auto all_up = [&] {
    for (FakeAgent* agent : agents) {
      const v1::NodeRecord node = h.Node(agent->name);
      if (node.state() != v1::NODE_UP || node.drained()) return false;
    }
    return true;
  };
  h.Tick(
      10, [] { return false; }, all_beat);
  // Every agent silent for twice the node timeout (the controller cut off
  // from them): none is marked down yet.
  h.Tick(
      10, [] { return false; }, [] {});
  CHECK(all_up());
  // Heard again within the grace: nothing happened to any of them.
  h.Tick(
      3, [] { return false; }, all_beat);
  CHECK(all_up());
  // Silent past the grace: down, as a lost node is.
  REQUIRE(h.Tick(
      40, [&] { return h.Node("n1").state() == v1::NODE_DOWN; }, [] {}));
  CHECK(h.Node("n2").state() == v1::NODE_DOWN);
  CHECK(h.Node("n3").state() == v1::NODE_DOWN);
}

TEST_CASE(
    "the last agent back from a mass silence keeps the grace the others had",
    "[controller][component]") {
  ControllerOptions options = ComponentOptions();
  options.reconnect_grace_ms = 4000;
  Harness h(options);
  FakeAgent n1("n1"), n2("n2"), n3("n3");
  for (FakeAgent* agent : {&n1, &n2, &n3}) h.Register(*agent);
  const auto beat = [&](std::vector<FakeAgent*> agents) {
    return [&h, agents] {
      for (FakeAgent* agent : agents) h.Heartbeat(*agent);
    };
  };
  h.Tick(
      10, [] { return false; }, beat({&n1, &n2, &n3}));
  // The controller cut off from all three...
  h.Tick(
      10, [] { return false; }, [] {});
  // ...then healed: n1 and n2 are back first, n3 a little later (its
  // reconnect backoff). It must not go down in between.
  h.Tick(
      3, [] { return false; }, beat({&n1, &n2}));
  CHECK(h.Node("n3").state() == v1::NODE_UP);
  h.Tick(
      3, [] { return false; }, beat({&n1, &n2, &n3}));
  CHECK(h.Node("n3").state() == v1::NODE_UP);
  CHECK_FALSE(h.Node("n3").drained());
  // A node silent past the grace is down all the same.
  REQUIRE(h.Tick(
      60, [&] { return h.Node("n3").state() == v1::NODE_DOWN; },
      beat({&n1, &n2})));
  CHECK(h.Node("n1").state() == v1::NODE_UP);
}

// A 2-node job (one GPU a node) on n1 and n2, and n3 registered once it
// runs, a spare; then n1 falls silent until it is found down while n2 and n3
// keep beating. Returns the job's id.
uint64_t LoseOneNodeOfTwo(Harness& h, FakeAgent& n1, FakeAgent& n2,
                          FakeAgent& n3) {
  h.Register(n1);
  h.Register(n2);
  const uint64_t id = h.Submit(/*gpus_per_node=*/1, /*nodes=*/2);
  REQUIRE(h.PumpUntil([&] { return h.Job(id).state() == v1::RUNNING; }));
  h.Register(n3);
  REQUIRE(h.Tick(
      30, [&] { return h.Node("n1").state() == v1::NODE_DOWN; },
      [&] {
        h.Heartbeat(n2);
        h.Heartbeat(n3);
      }));
  return id;
}

std::vector<std::string> SortedNodes(const v1::AttemptRecord& attempt) {
  std::vector<std::string> nodes(attempt.nodes().begin(),
                                 attempt.nodes().end());
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

TEST_CASE(
    "after a node fault the restart waits for the attempt's other nodes to "
    "be heard from once the fault has settled, and probes them",
    "[controller][component]") {
  // Settling takes longer than finding n1 dead, so n2's beats meanwhile
  // do not count.
  constexpr int64_t kSettleMs = 3000;
  ControllerOptions options = ComponentOptions();
  options.features = FeaturesSettlingIn(kSettleMs);
  Harness h(options);
  FakeAgent n1("n1"), n2("n2"), n3("n3");
  // n2 says nothing after n1 is found down (it may be failing too, not yet
  // found).
  const uint64_t id = LoseOneNodeOfTwo(h, n1, n2, n3);
  // n2's rank of the failed attempt ends (killed), in the same instant as
  // the fault: its share is free, but n2 is not heard from after the fault.
  REQUIRE_FALSE(n2.link->Launches().empty());
  h.RankExited(n2, n2.link->Launches().front(), 143);
  for (int i = 0; i < 5; ++i) h.Pump();
  CHECK(h.Job(id).state() == v1::PENDING);
  CHECK(n3.link->Launches().empty());
  // Heard from before the fault has settled: a node failing a moment
  // after the first is still possible, so not yet.
  h.clock_.AdvanceMs(10);
  h.Heartbeat(n2);
  for (int i = 0; i < 5; ++i) h.Pump();
  CHECK(h.Job(id).state() == v1::PENDING);
  CHECK(n2.link->Probes() == 0);
  // Once it has settled, the controller asks n2 for a heartbeat (and no
  // one else: n3 was not in the failed attempt); n2's answer lets the job
  // restart on it and the spare.
  h.clock_.AdvanceMs(kSettleMs);
  REQUIRE(h.PumpUntil([&] { return n2.link->Probes() == 1; }));
  CHECK(n3.link->Probes() == 0);
  CHECK(h.Job(id).state() == v1::PENDING);
  h.Heartbeat(n2);
  INFO(h.Job(id).reason_detail());
  REQUIRE(h.PumpUntil([&] { return h.Job(id).state() == v1::RUNNING; }));
  const v1::JobRecord job = h.Job(id);
  CHECK(job.attempt() == 2);
  CHECK(SortedNodes(job.attempts(1)) == std::vector<std::string>{"n2", "n3"});
}

TEST_CASE(
    "a lone node found dead after the settle time restarts its job at once",
    "[controller][component]") {
  // Beats every 200 ms, found dead after 1 s of silence, 300 ms to settle.
  ControllerOptions options = ComponentOptions();
  options.heartbeat_interval_ms = 200;
  options.features = FeaturesSettlingIn(300, 200);
  Harness h(options);
  FakeAgent n1("n1"), n2("n2"), n3("n3");
  // n1 went silent a node timeout ago; n2 kept beating well after that
  // plus the settle time: it is alive, no need to wait or probe.
  const uint64_t id = LoseOneNodeOfTwo(h, n1, n2, n3);
  h.RankExited(n2, n2.link->Launches().front(), 143);
  REQUIRE(h.PumpUntil([&] { return h.Job(id).state() == v1::RUNNING; }));
  CHECK(n2.link->Probes() == 0);
  CHECK(SortedNodes(h.Job(id).attempts(1)) ==
        std::vector<std::string>{"n2", "n3"});
}

TEST_CASE(
    "a controller stalled before its first tick gives nodes their timeout "
    "back",
    "[controller][component]") {
  Harness h;
  FakeAgent n1("n1"), n2("n2");
  h.Register(n1);
  h.Register(n2);
  // gantryd is stopped (SIGSTOP, a slow disk) within its first 250 ms, for
  // three node timeouts. The agents were not heard because nobody listened.
  h.clock_.AdvanceMs(3000);
  // Its first tick comes before any heartbeat (the agents were stopped too).
  h.Tick(
      1, [] { return false; }, [] {});
  REQUIRE_FALSE(h.Tick(
      5, [] { return false; },
      [&] {
        h.Heartbeat(n1);
        h.Heartbeat(n2);
      }));
  CHECK(h.Node("n1").state() == v1::NODE_UP);
  CHECK(h.Node("n2").state() == v1::NODE_UP);
  CHECK_FALSE(n1.link->closed());
}

TEST_CASE(
    "after a controller restart, an agent that still runs the rank keeps "
    "it",
    "[controller][component]") {
  Harness h;
  FakeAgent n1("n1");
  h.Register(n1);
  const uint64_t id = h.Submit(1);
  REQUIRE(h.PumpUntil([&] { return n1.link->Launches().size() == 1; }));
  const v1::LaunchRanks launch = n1.link->Launches().front();

  h.StopController();
  h.StartController();
  CHECK(h.Job(id).state() == v1::RUNNING);
  // The same agent process redials and reports the rank it runs.
  h.Register(n1, {RankOf(launch)});
  for (int i = 0; i < 10; ++i) h.Pump();
  CHECK(n1.link->Launches().empty());  // nothing launched twice
  CHECK(h.Job(id).attempt() == 1);

  h.RankExited(n1, launch, 0);
  REQUIRE(h.PumpUntil([&] { return h.Job(id).state() == v1::COMPLETED; }));
  CHECK(h.Job(id).attempts_size() == 1);
}

TEST_CASE(
    "a launch lost between the start's commit and its send goes out again "
    "after a restart, as the same attempt",
    "[controller][component]") {
  Harness h;
  FakeAgent n1("n1");
  h.Register(n1);
  // The controller dies right after committing the start: the launch never
  // leaves (gantryd.start.after_commit_before_launch).
  n1.link->DropEverything();
  const uint64_t id = h.Submit(1);
  REQUIRE(h.PumpUntil([&] { return n1.link->dropped() > 0; }));
  REQUIRE(h.Job(id).state() == v1::RUNNING);
  h.StopController();

  h.StartController();
  // The agent never got it, so it reports nothing running.
  h.Register(n1);
  REQUIRE(h.PumpUntil([&] { return !n1.link->Launches().empty(); }));
  const v1::LaunchRanks launch = n1.link->Launches().front();
  CHECK(launch.job_id() == id);
  CHECK(launch.attempt() == 1);  // not a restart, and not charged as one
  const v1::JobRecord job = h.Job(id);
  CHECK(job.state() == v1::RUNNING);
  CHECK(job.attempt() == 1);
}

TEST_CASE(
    "scontrol requeue stops a running job and runs it again, uncharged, and "
    "puts a finished one back to pending",
    "[controller][component]") {
  Harness h;
  FakeAgent n1("n1");
  h.Register(n1);
  const uint64_t id = h.Submit(1);
  REQUIRE(h.PumpUntil([&] { return n1.link->Launches().size() == 1; }));
  const v1::LaunchRanks first = n1.link->Launches().front();

  auto requeue = [&](const Caller& caller, bool hold = false) {
    v1::RequeueRequest request;
    request.add_job_ids(id);
    request.set_hold(hold);
    std::optional<v1::RequeueResponse> response;
    h.controller_->Requeue(request, caller,
                           [&](v1::RequeueResponse r) { response = r; });
    REQUIRE(h.PumpUntil([&] { return response.has_value(); }));
    REQUIRE(response->results_size() == 1);
    return response->results(0);
  };
  CHECK(requeue(kAlice).ok());
  CHECK(h.Job(id).state() == v1::PENDING);
  // The old attempt's rank ends as it is killed; then the next attempt.
  h.RankExited(n1, first, 143);
  REQUIRE(h.Tick(
      20, [&] { return n1.link->Launches().size() == 2; },
      [&] { h.Heartbeat(n1); }));
  v1::JobRecord job = h.Job(id);
  CHECK(job.state() == v1::RUNNING);
  CHECK(job.attempt() == 2);
  CHECK(job.uncharged_attempts() == 1);
  REQUIRE(job.attempts_size() == 2);
  CHECK(job.attempts(0).end_reason() == "Requeued");

  h.RankExited(n1, n1.link->Launches().back(), 0);
  REQUIRE(h.PumpUntil([&] { return h.Job(id).state() == v1::COMPLETED; }));
  // requeuehold: pending, and held there.
  CHECK(requeue(kAlice, true).ok());
  for (int i = 0; i < 10; ++i) h.Pump();
  job = h.Job(id);
  CHECK(job.state() == v1::PENDING);
  CHECK(job.held());
  CHECK(job.end_time_ms() == 0);
  CHECK(n1.link->Launches().size() == 2);
  // Pending now: nothing to requeue.
  const v1::CancelResult again = requeue(kAlice);
  CHECK_FALSE(again.ok());
  CHECK_THAT(again.error(), Catch::Contains("pending"));
}

TEST_CASE(
    "scontrol update: owners shorten time limits, only admins lengthen "
    "them, partitions change only while pending",
    "[controller][component]") {
  Harness h;
  FakeAgent n1("n1");
  h.Register(n1);
  const uint64_t id = h.Submit(1);
  REQUIRE(h.PumpUntil([&] { return n1.link->Launches().size() == 1; }));
  auto update = [&](const Caller& caller,
                    const std::function<void(v1::UpdateJobRequest&)>& set) {
    v1::UpdateJobRequest request;
    request.add_job_ids(id);
    set(request);
    std::optional<v1::UpdateJobResponse> response;
    h.controller_->UpdateJob(request, caller,
                             [&](v1::UpdateJobResponse r) { response = r; });
    REQUIRE(h.PumpUntil([&] { return response.has_value(); }));
    REQUIRE(response->results_size() == 1);
    return response->results(0);
  };
  auto limit = [](uint64_t seconds) {
    return [seconds](v1::UpdateJobRequest& r) {
      r.set_time_limit_seconds(seconds);
    };
  };
  CHECK(update(kAlice, limit(3600)).ok());
  CHECK(h.Job(id).spec().time_limit_seconds() == 3600);
  CHECK(update(kAlice, limit(600)).ok());
  const v1::CancelResult longer = update(kAlice, limit(7200));
  CHECK_FALSE(longer.ok());
  CHECK_THAT(longer.error(), Catch::Contains("only an admin"));
  CHECK_FALSE(update(kAlice, limit(0)).ok());  // unlimited is longer too
  CHECK(h.Job(id).spec().time_limit_seconds() == 600);
  CHECK(update(kRoot, limit(7200)).ok());
  CHECK(h.Job(id).spec().time_limit_seconds() == 7200);
  const v1::CancelResult moved =
      update(kAlice, [](v1::UpdateJobRequest& r) { r.set_partition("other"); });
  CHECK_FALSE(moved.ok());
  CHECK_THAT(moved.error(), Catch::Contains("pending"));
  CHECK(update(kAlice, [](v1::UpdateJobRequest& r) {
          r.set_name("renamed");
        }).ok());
  CHECK(h.Job(id).spec().name() == "renamed");
  // Bounded as at submission: no control characters for others to print.
  CHECK_FALSE(update(kAlice, [](v1::UpdateJobRequest& r) {
                r.set_name("evil\x1b[2J");
              }).ok());
  CHECK(h.Job(id).spec().name() == "renamed");
}

TEST_CASE(
    "an attempt's goodput times: ranks running, progress, checkpoint, and a "
    "silent node's last message as the fault",
    "[controller][component][goodput]") {
  Harness h;
  FakeAgent n1("n1"), n2("n2");
  h.Register(n1);
  h.Register(n2);
  const uint64_t id = h.Submit(2);
  REQUIRE(h.PumpUntil([&] {
    return n1.link->Launches().size() + n2.link->Launches().size() == 1;
  }));
  FakeAgent& lost = n1.link->Launches().empty() ? n2 : n1;
  FakeAgent& alive = &lost == &n1 ? n2 : n1;
  const v1::LaunchRanks launch = lost.link->Launches().front();

  h.clock_.AdvanceMs(100);
  const int64_t running_at = h.clock_.NowMs();
  h.RankStarted(lost, launch);
  CHECK(h.Job(id).attempts(0).ranks_running_ms() == running_at);
  h.clock_.AdvanceMs(100);
  const int64_t progress_at = h.clock_.NowMs();
  h.ReportProgress(id, "", 1);
  h.clock_.AdvanceMs(100);
  const int64_t checkpoint_at = h.clock_.NowMs();
  h.ReportProgress(id, "/ck/step2", 2);
  h.clock_.AdvanceMs(100);
  h.ReportProgress(id, "", 3);  // progress again: the first one stays
  h.clock_.AdvanceMs(200);
  const int64_t last_heard = h.clock_.NowMs();
  h.Heartbeat(lost);
  {
    const v1::AttemptRecord attempt = h.Job(id).attempts(0);
    CHECK(attempt.first_progress_ms() == progress_at);
    CHECK(attempt.last_checkpoint_ms() == checkpoint_at);
    CHECK(attempt.fault_time_ms() == 0);
  }

  REQUIRE(h.Tick(
      30, [&] { return !alive.link->Launches().empty(); },
      [&] { h.Heartbeat(alive); }));
  const v1::JobRecord job = h.Job(id);
  REQUIRE(job.attempts_size() == 2);
  const v1::AttemptRecord& failed = job.attempts(0);
  CHECK(failed.node_fault());
  CHECK(failed.fault_time_ms() == last_heard);
  CHECK(failed.end_time_ms() - failed.fault_time_ms() >=
        h.options_.node_timeout_ms);
  CHECK(job.attempts(1).ranks_running_ms() == 0);
  // The reply carries the split: the work after the checkpoint was lost,
  // the node's silence was detection.
  const v1::GoodputSplit& split = job.goodput();
  CHECK(split.starting_ms() == progress_at - failed.start_time_ms());
  CHECK(split.productive_ms() == checkpoint_at - progress_at);
  CHECK(split.lost_ms() == last_heard - checkpoint_at);
  CHECK(split.detecting_ms() == failed.end_time_ms() - last_heard);
  CHECK(split.queued_ms() + split.starting_ms() + split.productive_ms() +
            split.lost_ms() + split.detecting_ms() + split.recovering_ms() +
            split.preflight_ms() ==
        h.clock_.NowMs() - job.submit_time_ms());
  // `gantry status` counts it in the last day, also after a restart.
  h.Pump();
  const v1::ClusterStatusResponse before = h.controller_->ClusterStatus();
  CHECK(before.goodput_last_day().lost_ms() == split.lost_ms());
  CHECK(before.goodput_last_day().detecting_ms() == split.detecting_ms());
  h.StopController();
  h.StartController();
  const v1::ClusterStatusResponse after = h.controller_->ClusterStatus();
  CHECK(after.goodput_last_day().lost_ms() == split.lost_ms());
  CHECK(after.goodput_last_day().detecting_ms() == split.detecting_ms());
  CHECK(after.ettr_last_day() > 0);
}

TEST_CASE(
    "a gang over many loop turns' worth of launches gets one launch per node, "
    "all with the same node list and distinct ranks",
    "[controller][component]") {
  Harness h;
  constexpr int kNodes = 150;  // more than two turns' launches
  std::vector<std::unique_ptr<FakeAgent>> agents;
  for (int i = 1; i <= kNodes; ++i) {
    agents.push_back(std::make_unique<FakeAgent>("n" + std::to_string(i)));
    h.Register(*agents.back());
  }
  const uint64_t id = h.Submit(/*gpus_per_node=*/1, kNodes);
  REQUIRE(h.PumpUntil([&] {
    return std::all_of(agents.begin(), agents.end(), [](const auto& agent) {
      return !agent->link->Launches().empty();
    });
  }));
  h.Pump();
  std::set<uint32_t> ranks;
  std::set<std::string> node_lists;
  for (const auto& agent : agents) {
    const std::vector<v1::LaunchRanks> launches = agent->link->Launches();
    REQUIRE(launches.size() == 1);
    CHECK(launches[0].job_id() == id);
    REQUIRE(launches[0].ranks_size() == 1);
    ranks.insert(launches[0].ranks(0).rank());
    node_lists.insert(
        launches[0].ranks(0).environment().at("SLURM_JOB_NODELIST"));
    CHECK(launches[0].ranks(0).environment().at("SLURM_NNODES") ==
          std::to_string(kNodes));
  }
  CHECK(ranks.size() == kNodes);
  CHECK(*ranks.rbegin() == kNodes - 1);
  CHECK(node_lists == std::set<std::string>{"n[1-150]"});
}

}  // namespace controller_component_test
}  // namespace gantry
