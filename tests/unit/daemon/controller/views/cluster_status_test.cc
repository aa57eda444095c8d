// `gantry status` on the controller side: the pure answer builder
// (node words, GPU and port counts, pending reasons, recent failures) and
// the small in-memory histories that feed it (commit latencies, node
// events).
#include "daemon/controller/views/cluster_status.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "daemon/controller/core/commit_latencies.h"
#include "daemon/controller/core/node_event_log.h"

namespace gantry {
namespace cluster_status_test {

constexpr int64_t kNow = 1'700'000'000'000;

v1::NodeRecord Node(const std::string& name, uint32_t cpus, int gpus) {
  v1::NodeRecord node;
  node.set_name(name);
  node.set_state(v1::NODE_UP);
  node.mutable_inventory()->set_cpus(cpus);
  for (int i = 0; i < gpus; ++i) {
    node.mutable_inventory()->add_gpus()->set_index(static_cast<uint32_t>(i));
  }
  return node;
}

void AddHca(v1::NodeRecord& node, const std::string& device,
            const std::vector<std::string>& port_states,
            const std::string& role = "compute") {
  v1::NetworkDevice* hca = node.mutable_inventory()->add_network_devices();
  hca->set_name(device);
  hca->set_kind("openfabrics");
  hca->set_role(role);
  uint32_t number = 1;
  for (const std::string& state : port_states) {
    v1::HcaPort* port = hca->add_ports();
    port->set_port(number++);
    port->set_state(state);
  }
}

v1::JobRecord Job(uint64_t id, v1::JobState state,
                  const std::string& reason = "",
                  const std::string& detail = "") {
  v1::JobRecord job;
  job.set_id(id);
  job.set_state(state);
  job.set_reason(reason);
  job.set_reason_detail(detail);
  return job;
}

void AddAttempt(v1::JobRecord& job, int64_t end_ms, const std::string& reason,
                const std::vector<std::string>& nodes,
                const std::string& detail = "") {
  v1::AttemptRecord* attempt = job.add_attempts();
  attempt->set_attempt(static_cast<uint32_t>(job.attempts_size()));
  attempt->set_start_time_ms(end_ms - 1000);
  attempt->set_end_time_ms(end_ms);
  attempt->set_end_reason(reason);
  attempt->set_end_detail(detail);
  for (const std::string& node : nodes) attempt->add_nodes(node);
}

v1::EventRecord NodeEvent(int64_t time_ms, const std::string& node,
                          const std::string& kind, const std::string& detail) {
  v1::EventRecord event;
  event.set_time_ms(time_ms);
  event.set_node(node);
  event.set_kind(kind);
  event.set_detail(detail);
  return event;
}

template <typename T>
std::vector<const T*> Pointers(const std::vector<T>& items) {
  std::vector<const T*> pointers;
  for (const T& item : items) pointers.push_back(&item);
  return pointers;
}

TEST_CASE("each node gets one word, the most serious that applies",
          "[status]") {
  v1::NodeRecord node = Node("n1", 8, 4);
  CHECK(NodeStatusWord(node) == "idle");
  node.set_gpus_allocated(1);
  CHECK(NodeStatusWord(node) == "mixed");
  node.set_gpus_allocated(4);
  CHECK(NodeStatusWord(node) == "allocated");  // every GPU, not every CPU
  node.set_gpus_allocated(0);
  node.set_cpus_allocated(8);
  CHECK(NodeStatusWord(node) == "allocated");
  node.set_drained(true);
  CHECK(NodeStatusWord(node) == "drained");
  node.add_health_problems("GPU 2 is gone");
  CHECK(NodeStatusWord(node) == "degraded");
  node.set_state(v1::NODE_UNREACHABLE);
  CHECK(NodeStatusWord(node) == "unreachable");
  node.set_state(v1::NODE_DOWN);
  CHECK(NodeStatusWord(node) == "down");

  v1::NodeRecord cpu_only = Node("n2", 4, 0);
  cpu_only.set_mem_allocated_mb(100);
  CHECK(NodeStatusWord(cpu_only) == "mixed");
}

TEST_CASE(
    "pending reasons are counted, most common first, with the lowest "
    "job id's detail",
    "[status]") {
  const std::vector<v1::JobRecord> jobs = {
      Job(9, v1::PENDING, "Priority", "behind job 3"),
      Job(4, v1::PENDING, "Resources", "needs 2 nodes, 1 free"),
      Job(7, v1::PENDING, "Resources", "needs 4 nodes"),
      Job(5, v1::RUNNING, "None"),
      Job(12, v1::PENDING, ""),
      Job(2, v1::PENDING, "Resources", "first"),
      Job(3, v1::FAILED, "NonZeroExitCode"),
  };
  const std::vector<v1::ReasonCount> reasons =
      CountPendingReasons(Pointers(jobs));
  REQUIRE(reasons.size() == 3);
  CHECK(reasons[0].reason() == "Resources");
  CHECK(reasons[0].count() == 3);
  CHECK(reasons[0].example_job_id() == 2);
  CHECK(reasons[0].example() == "first");
  // Ties by name.
  CHECK(reasons[1].reason() == "None");
  CHECK(reasons[1].count() == 1);
  CHECK(reasons[2].reason() == "Priority");
  CHECK(reasons[2].example() == "behind job 3");
}

TEST_CASE("nodes, GPUs and ports are counted by state", "[status]") {
  std::vector<v1::NodeRecord> nodes;
  nodes.push_back(Node("idle1", 16, 4));
  AddHca(nodes.back(), "mlx5_0", {"ACTIVE"});
  AddHca(nodes.back(), "mlx5_1", {"ACTIVE", "DOWN"});
  AddHca(nodes.back(), "mlx5_2", {"DOWN"}, "storage");  // not compute
  nodes.push_back(Node("mixed1", 16, 4));
  nodes.back().set_gpus_allocated(2);
  nodes.back().set_cpus_allocated(4);
  nodes.back().set_simulated(true);
  nodes.push_back(Node("drained1", 16, 4));
  nodes.back().set_drained(true);
  nodes.back().set_drain_reason("maintenance");
  nodes.back().set_gpus_allocated(1);  // still draining
  nodes.push_back(Node("sick1", 16, 4));
  nodes.back().add_health_problems("GPU 2 (0000:cb:00.0) is gone");
  nodes.back().add_health_problems("mlx5_0 port 1 is DOWN");
  nodes.push_back(Node("down1", 16, 4));
  nodes.back().set_state(v1::NODE_DOWN);
  nodes.back().set_reason("heartbeats stopped");
  nodes.back().set_drained(true);
  nodes.back().set_drain_reason("heartbeats stopped");
  AddHca(nodes.back(), "mlx5_0", {"DOWN"});  // stale: not counted
  nodes.push_back(Node("lost1", 16, 0));
  nodes.back().set_state(v1::NODE_UNREACHABLE);
  nodes.back().set_reason("agent stream closed");
  nodes.back().set_hot_spare(true);

  ClusterStatusInput input;
  input.now_ms = kNow;
  input.nodes = Pointers(nodes);
  const v1::ClusterStatusResponse status = BuildClusterStatus(input);

  CHECK(status.nodes_total() == 6);
  CHECK(status.nodes_up() == 4);
  CHECK(status.nodes_unreachable() == 1);
  CHECK(status.nodes_down() == 1);
  const v1::StatusNodeCounts& counts = status.node_counts();
  CHECK(counts.idle() == 1);
  CHECK(counts.mixed() == 1);
  CHECK(counts.allocated() == 0);
  CHECK(counts.drained() == 1);
  CHECK(counts.degraded() == 1);
  CHECK(counts.down() == 1);
  CHECK(counts.unreachable() == 1);
  CHECK(counts.simulated() == 1);
  CHECK(counts.hot_spares() == 1);

  CHECK(status.gpus_total() == 20);
  CHECK(status.gpus_allocated() == 3);
  CHECK(status.gpus_idle() == 4 + 2);      // idle1, mixed1
  CHECK(status.gpus_down() == 3 + 4 + 4);  // drained1, sick1, down1
  CHECK(status.gpu_utilization_now() == Approx(3.0 / 20.0));
  CHECK(status.cpus_total() == 96);
  CHECK(status.cpus_allocated() == 4);

  CHECK(status.hca_ports_total() == 3);
  REQUIRE(status.hca_ports_down_size() == 1);
  CHECK(status.hca_ports_down(0).node() == "idle1");
  CHECK(status.hca_ports_down(0).device() == "mlx5_1");
  CHECK(status.hca_ports_down(0).port() == 2);
  CHECK(status.hca_ports_down(0).state() == "DOWN");

  // Most serious first; each with its reason.
  REQUIRE(status.node_issues_size() == 4);
  CHECK(status.node_issues(0).node() == "down1");
  CHECK(status.node_issues(0).state() == "down");
  CHECK(status.node_issues(0).reason() == "heartbeats stopped");
  CHECK(status.node_issues(1).node() == "lost1");
  CHECK(status.node_issues(1).state() == "unreachable");
  CHECK(status.node_issues(2).node() == "sick1");
  CHECK(status.node_issues(2).reason() ==
        "GPU 2 (0000:cb:00.0) is gone; mlx5_0 port 1 is DOWN");
  CHECK(status.node_issues(3).node() == "drained1");
  CHECK(status.node_issues(3).reason() == "maintenance");
  CHECK(status.node_issues(3).busy());
}

TEST_CASE("jobs are counted in every state, zeros included", "[status]") {
  const std::vector<v1::JobRecord> jobs = {
      Job(1, v1::COMPLETED), Job(2, v1::COMPLETED), Job(3, v1::FAILED),
      Job(4, v1::PENDING),   Job(5, v1::RUNNING),   Job(6, v1::NODE_FAIL)};
  ClusterStatusInput input;
  input.now_ms = kNow;
  input.jobs = Pointers(jobs);
  const v1::ClusterStatusResponse status = BuildClusterStatus(input);
  // Every state of the enum: PENDING ... OUT_OF_MEMORY, then DEADLINE.
  REQUIRE(status.jobs_by_state_size() == 9);
  CHECK(status.jobs_by_state(8).state() == v1::DEADLINE);
  CHECK(status.jobs_by_state(8).count() == 0);
  CHECK(status.jobs_by_state(0).state() == v1::PENDING);
  CHECK(status.jobs_by_state(0).count() == 1);
  CHECK(status.jobs_by_state(2).state() == v1::COMPLETED);
  CHECK(status.jobs_by_state(2).count() == 2);
  CHECK(status.jobs_by_state(5).state() == v1::TIMEOUT);
  CHECK(status.jobs_by_state(5).count() == 0);
  CHECK(status.jobs_pending() == 1);
  CHECK(status.jobs_running() == 1);
}

TEST_CASE("recent failures: failed attempts and node events, newest first",
          "[status]") {
  std::vector<v1::JobRecord> jobs;
  // Failed, restarted, then completed.
  jobs.push_back(Job(1, v1::COMPLETED));
  AddAttempt(jobs.back(), kNow - 50'000, "NonZeroExitCode", {"n1"},
             "rank 0 on n1 exited with code 3");
  AddAttempt(jobs.back(), kNow - 40'000, "Completed", {"n2"});
  // Failed twice: the second time for good.
  jobs.push_back(Job(2, v1::FAILED));
  AddAttempt(jobs.back(), kNow - 30'000, "NodeFail", {"n1", "n2"},
             "node n1 is down");
  AddAttempt(jobs.back(), kNow - 20'000, "Hang", {"n3"});
  // Requeued and waiting for its restart.
  jobs.push_back(Job(3, v1::PENDING, "Restarting"));
  AddAttempt(jobs.back(), kNow - 10'000, "Signal", {"n3"});
  // Cancelled and timed out long ago: the cancel is no failure.
  jobs.push_back(Job(4, v1::CANCELLED));
  AddAttempt(jobs.back(), kNow - 2 * 3'600'000, "Cancelled", {"n1"});
  jobs.push_back(Job(5, v1::TIMEOUT));
  AddAttempt(jobs.back(), kNow - 2 * 3'600'000, "TimeLimit", {"n1"});

  const std::vector<v1::EventRecord> node_events = {
      NodeEvent(kNow - 31'000, "n1", "node_drained", "heartbeats stopped"),
      NodeEvent(kNow - 30'500, "n1", "node_down", "heartbeats stopped"),
      NodeEvent(kNow - 5'000, "n4", "node_drained", "maintenance"),
      NodeEvent(kNow - 2 * 3'600'000, "n5", "node_degraded", "GPU 1 is gone"),
  };

  const std::vector<v1::StatusEvent> recent =
      RecentFailures(Pointers(jobs), node_events, 100);
  std::vector<std::string> seen;
  for (const v1::StatusEvent& event : recent) {
    seen.push_back(event.kind() + " " +
                   (event.job_id() ? std::to_string(event.job_id()) + "." +
                                         std::to_string(event.attempt())
                                   : event.nodes()));
  }
  // The drain that came with n1's node_down is not repeated.
  CHECK(seen == std::vector<std::string>{"node_drained n4", "job_restarted 3.1",
                                         "job_failed 2.2", "job_restarted 2.1",
                                         "node_down n1", "job_restarted 1.1",
                                         "job_failed 5.1", "node_degraded n5"});
  CHECK(recent[2].reason() == "Hang");
  CHECK(recent[3].nodes() == "n[1-2]");
  CHECK(recent[3].detail() == "node n1 is down");

  const std::vector<v1::StatusEvent> limited =
      RecentFailures(Pointers(jobs), node_events, 2);
  REQUIRE(limited.size() == 2);
  CHECK(limited[0].kind() == "node_drained");

  ClusterStatusInput input;
  input.now_ms = kNow;
  input.jobs = Pointers(jobs);
  input.node_events = node_events;
  input.recent_limit = 3;
  const v1::ClusterStatusResponse status = BuildClusterStatus(input);
  CHECK(status.recent_failures_size() == 3);
  CHECK(status.job_failures_last_hour() == 4);  // 1.1, 2.1, 2.2, 3.1
  CHECK(status.restarts_last_hour() == 3);      // 1.1, 2.1, 3.1
  CHECK(status.node_failures_last_hour() == 1);
}

TEST_CASE("the utilization series and mean come from the history", "[status]") {
  UtilizationHistory history(60'000, 60);
  history.Record(kNow - 120'000, 4, 4);
  history.Record(kNow - 1'000, 4, 0);
  ClusterStatusInput input;
  input.now_ms = kNow;
  input.utilization = &history;
  const v1::ClusterStatusResponse status = BuildClusterStatus(input);
  CHECK(status.gpu_utilization_size() == 2);
  CHECK(status.gpu_utilization_mean() == Approx(0.5));
  CHECK(status.utilization_bucket_seconds() == 60);
}

TEST_CASE("commit latencies: the last and the median of the kept ones",
          "[status]") {
  CommitLatencies latencies(4);
  CHECK(latencies.count() == 0);
  CHECK(latencies.last() == 0.0);
  CHECK(latencies.Median() == 0.0);
  latencies.Add(0.003);
  CHECK(latencies.Median() == Approx(0.003));
  latencies.Add(0.001);
  CHECK(latencies.Median() == Approx(0.002));
  latencies.Add(0.100);
  CHECK(latencies.Median() == Approx(0.003));
  latencies.Add(0.002);
  latencies.Add(0.004);  // replaces 0.003, the oldest
  CHECK(latencies.count() == 4);
  CHECK(latencies.last() == Approx(0.004));
  CHECK(latencies.Median() == Approx(0.003));  // of 0.001 0.002 0.004 0.1
}

TEST_CASE("the node event log keeps node failures and drains only",
          "[status]") {
  NodeEventLog log(2);
  log.Observe(NodeEvent(1, "n1", "node_registered", ""));
  log.Observe(NodeEvent(2, "n1", "node_down", "heartbeats stopped"));
  v1::EventRecord job_event = NodeEvent(3, "", "failed", "rank 0");
  job_event.set_job_id(7);
  log.Observe(job_event);
  log.Observe(NodeEvent(4, "n2", "node_degraded", "GPU gone"));
  log.Observe(NodeEvent(5, "n2", "node_drained", "degraded: GPU gone"));
  const std::vector<v1::EventRecord> events = log.Events();
  REQUIRE(events.size() == 2);  // the oldest went
  CHECK(events[0].kind() == "node_degraded");
  CHECK(events[1].kind() == "node_drained");
}

}  // namespace cluster_status_test
}  // namespace gantry
