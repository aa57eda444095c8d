// The scheduler core fed by hand: gang placement, FIFO blocking, reasons.
#include "daemon/scheduler/scheduler.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <memory>

namespace gantry {
namespace scheduler_test {

NodeSnapshot Node(std::string name, uint32_t cpus, uint32_t gpus = 0,
                  uint64_t mem = 64000) {
  NodeSnapshot n;
  n.name = std::move(name);
  n.partitions = {"main"};
  n.cpus_total = n.cpus_free = cpus;
  n.gpus_total = gpus;
  for (uint32_t g = 0; g < gpus; ++g) n.free_gpus.push_back(g);
  n.mem_total_mb = n.mem_free_mb = mem;
  return n;
}

PendingJob Job(uint64_t id, uint32_t nodes, uint32_t tasks = 1,
               uint32_t cpus = 1, uint32_t gpus = 0) {
  PendingJob j;
  j.id = JobId(id);
  j.partition = "main";
  j.nodes = nodes;
  j.max_tasks_per_node = tasks;
  j.cpus_per_task = cpus;
  j.gpus_per_node = gpus;
  return j;
}

TEST_CASE("a gang starts on all its nodes at once or not at all",
          "[scheduler]") {
  std::vector<NodeSnapshot> nodes = {Node("a", 4), Node("b", 4), Node("c", 4)};
  nodes[1].cpus_free = 1;                                 // b is busy
  ScheduleResult r = Schedule(nodes, {Job(1, 2, 2, 2)});  // 4 CPUs per node
  REQUIRE(r.starts.size() == 1);
  REQUIRE(r.starts[0].shares.size() == 2);
  CHECK(r.starts[0].shares[0].node == NodeId(0));
  CHECK(r.starts[0].shares[1].node == NodeId(2));
  CHECK(r.starts[0].shares[0].cpus == 4);

  r = Schedule(nodes, {Job(2, 3, 1, 2)});  // b cannot give 2 CPUs
  CHECK(r.starts.empty());
  REQUIRE(r.waits.size() == 1);
  CHECK(r.waits[0].reason == "Resources");
}

TEST_CASE("GPUs are handed out per node without overlap", "[scheduler]") {
  std::vector<NodeSnapshot> nodes = {Node("g1", 64, 8)};
  ScheduleResult r = Schedule(
      nodes, {Job(1, 1, 1, 1, 4), Job(2, 1, 1, 1, 4), Job(3, 1, 1, 1, 1)});
  REQUIRE(r.starts.size() == 2);
  CHECK(r.starts[0].shares[0].gpus == std::vector<uint32_t>{0, 1, 2, 3});
  CHECK(r.starts[1].shares[0].gpus == std::vector<uint32_t>{4, 5, 6, 7});
  REQUIRE(r.waits.size() == 1);
  CHECK(r.waits[0].job_id == JobId(3));
  CHECK(r.waits[0].reason == "Resources");
}

TEST_CASE("FIFO: a blocked job holds back the jobs behind it", "[scheduler]") {
  std::vector<NodeSnapshot> nodes = {Node("a", 2), Node("b", 2)};
  nodes[0].cpus_free = 0;
  ScheduleResult r = Schedule(nodes, {Job(1, 2), Job(2, 1)});
  CHECK(r.starts.empty());
  REQUIRE(r.waits.size() == 2);
  CHECK(r.waits[0].reason == "Resources");
  CHECK(r.waits[1].reason == "Priority");
}

TEST_CASE("a job that can never fit does not block the queue", "[scheduler]") {
  std::vector<NodeSnapshot> nodes = {Node("a", 2), Node("b", 2)};
  ScheduleResult r =
      Schedule(nodes, {Job(1, 5), Job(2, 1, 1, 1, 1), Job(3, 2)});
  REQUIRE(r.waits.size() == 2);
  CHECK(r.waits[0].job_id == JobId(1));
  CHECK(r.waits[0].reason == "PartitionNodeLimit");
  CHECK_THAT(r.waits[0].detail, Catch::Contains("has 2 such node(s)"));
  CHECK(r.waits[1].job_id == JobId(2));  // asks for a GPU no node has
  CHECK(r.waits[1].reason == "PartitionNodeLimit");
  REQUIRE(r.starts.size() == 1);
  CHECK(r.starts[0].job_id == JobId(3));
}

TEST_CASE("unreachable nodes and other partitions are not used",
          "[scheduler]") {
  std::vector<NodeSnapshot> nodes = {Node("a", 2), Node("b", 2), Node("c", 2)};
  nodes[0].schedulable = false;
  nodes[1].partitions = {"debug"};
  ScheduleResult r = Schedule(nodes, {Job(1, 1, 1, 2), Job(2, 1, 1, 2)});
  REQUIRE(r.starts.size() == 1);
  CHECK(r.starts[0].shares[0].node == NodeId(2));
  REQUIRE(r.waits.size() == 1);
  CHECK(r.waits[0].reason == "Resources");
}

TEST_CASE(
    "a job too big for the nodes that are up waits for nodes, not "
    "for resources, and blocks no one",
    "[scheduler]") {
  std::vector<NodeSnapshot> nodes = {Node("a", 2), Node("b", 2), Node("c", 2)};
  nodes[0].schedulable = false;  // down or drained after a failure
  ScheduleResult r = Schedule(nodes, {Job(1, 3, 1, 2), Job(2, 1, 1, 2)});
  REQUIRE(r.waits.size() == 1);
  CHECK(r.waits[0].job_id == JobId(1));
  CHECK(r.waits[0].reason == "NodeDown");
  CHECK_THAT(r.waits[0].detail,
             Catch::Contains("up: 2 of the 3 nodes that could hold it"));
  REQUIRE(r.starts.size() == 1);
  CHECK(r.starts[0].job_id == JobId(2));
  // Back up: it starts.
  nodes[0].schedulable = true;
  r = Schedule(nodes, {Job(1, 3, 1, 2)});
  CHECK(r.starts.size() == 1);
}

TEST_CASE("memory is counted per node", "[scheduler]") {
  std::vector<NodeSnapshot> nodes = {Node("a", 8, 0, 1000)};
  PendingJob big = Job(1, 1);
  big.mem_per_node_mb = 600;
  PendingJob second = Job(2, 1);
  second.mem_per_node_mb = 600;
  ScheduleResult r = Schedule(nodes, {big, second});
  CHECK(r.starts.size() == 1);
  REQUIRE(r.waits.size() == 1);
  CHECK(r.waits[0].reason == "Resources");
  big.mem_per_node_mb = 2000;
  r = Schedule(nodes, {big});
  REQUIRE(r.waits.size() == 1);
  CHECK(r.waits[0].reason == "PartitionNodeLimit");
}

}  // namespace scheduler_test
}  // namespace gantry

namespace gantry {
namespace scheduler_test {

TEST_CASE("hot spares serve only restarts, and restarts take them first",
          "[scheduler]") {
  std::vector<NodeSnapshot> nodes = {Node("a", 2), Node("b", 2),
                                     Node("spare", 2)};
  nodes[2].hot_spare = true;
  ScheduleResult r = Schedule(nodes, {Job(1, 3)});
  REQUIRE(r.waits.size() == 1);
  CHECK(r.waits[0].reason == "PartitionNodeLimit");

  PendingJob restart = Job(2, 2);
  restart.is_restart = true;
  r = Schedule(nodes, {restart});
  REQUIRE(r.starts.size() == 1);
  CHECK(r.starts[0].shares[0].node == NodeId(2));  // the spare
  CHECK(r.starts[0].shares[1].node == NodeId(0));
}

TEST_CASE("nodelist puts the listed nodes first and waits for them",
          "[scheduler][restrictions]") {
  std::vector<NodeSnapshot> nodes = {Node("a", 4), Node("b", 4), Node("c", 4),
                                     Node("d", 4)};
  PendingJob job = Job(1, 2);
  job.required_nodes = {"d", "b"};
  ScheduleResult r = Schedule(nodes, {job});
  REQUIRE(r.starts.size() == 1);
  REQUIRE(r.starts[0].shares.size() == 2);
  CHECK(r.starts[0].shares[0].node == NodeId(3));
  CHECK(r.starts[0].shares[1].node == NodeId(1));

  // More nodes than listed: the listed ones first, the rest anywhere.
  PendingJob bigger = Job(2, 3);
  bigger.required_nodes = {"c"};
  r = Schedule(nodes, {bigger});
  REQUIRE(r.starts.size() == 1);
  REQUIRE(r.starts[0].shares.size() == 3);
  CHECK(r.starts[0].shares[0].node == NodeId(2));
  for (std::size_t i = 1; i < 3; ++i) {
    CHECK(r.starts[0].shares[i].node != NodeId(2));
  }

  // A listed node that is busy: the job waits although others are free.
  nodes[3].cpus_free = 0;
  r = Schedule(nodes, {job});
  CHECK(r.starts.empty());
  REQUIRE(r.waits.size() == 1);
  CHECK(r.waits[0].reason == "Resources");

  // A listed node that is not in the partition: never.
  nodes[3].partitions = {"other"};
  r = Schedule(nodes, {job});
  REQUIRE(r.waits.size() == 1);
  CHECK(r.waits[0].reason == "PartitionNodeLimit");
  CHECK_THAT(r.waits[0].detail, Catch::Contains("--nodelist"));
}

TEST_CASE("exclude keeps a job off nodes and does not block others",
          "[scheduler][restrictions]") {
  std::vector<NodeSnapshot> nodes = {Node("a", 4), Node("b", 4)};
  PendingJob job = Job(1, 1, 1, 4);  // a whole node each
  job.excluded_nodes = {"a"};
  PendingJob other = Job(2, 1, 1, 4);
  ScheduleResult r = Schedule(nodes, {job, other});
  REQUIRE(r.starts.size() == 2);
  CHECK(r.starts[0].shares[0].node == NodeId(1));
  CHECK(r.starts[1].shares[0].node == NodeId(0));

  PendingJob two = Job(3, 2);
  two.excluded_nodes = {"b"};
  r = Schedule(nodes, {two});
  REQUIRE(r.waits.size() == 1);
  CHECK(r.waits[0].reason == "PartitionNodeLimit");
}

TEST_CASE("constraint picks nodes by feature and matching OR keeps one",
          "[scheduler][restrictions]") {
  std::vector<NodeSnapshot> nodes = {Node("a", 4), Node("b", 4), Node("c", 4),
                                     Node("d", 4)};
  nodes[0].features = {"rack1", "ib"};
  nodes[1].features = {"rack2", "ib"};
  nodes[2].features = {"rack2", "ib"};
  nodes[3].features = {"rack1"};
  auto with = [](PendingJob job, const std::string& text) {
    job.constraint =
        std::make_shared<const NodeConstraint>(*NodeConstraint::Parse(text));
    return job;
  };
  ScheduleResult r = Schedule(nodes, {with(Job(1, 2), "ib&[rack1|rack2]")});
  REQUIRE(r.starts.size() == 1);
  // rack1 has one node with ib, so both come from rack2.
  std::vector<std::size_t> got;
  for (const NodeShare& share : r.starts[0].shares) {
    got.push_back(share.node.index());
  }
  std::sort(got.begin(), got.end());
  CHECK(got == std::vector<std::size_t>{1, 2});

  r = Schedule(nodes, {with(Job(2, 3), "ib")});
  REQUIRE(r.starts.size() == 1);
  for (const NodeShare& share : r.starts[0].shares) {
    CHECK(share.node != NodeId(3));
  }

  r = Schedule(nodes, {with(Job(3, 3), "ib&[rack1|rack2]")});
  REQUIRE(r.waits.size() == 1);
  CHECK(r.waits[0].reason == "PartitionNodeLimit");

  r = Schedule(nodes, {with(Job(4, 1), "a100")});
  REQUIRE(r.waits.size() == 1);
  CHECK(r.waits[0].reason == "PartitionNodeLimit");
}

TEST_CASE("a GPU type picks nodes by GPU model or feature",
          "[scheduler][restrictions]") {
  std::vector<NodeSnapshot> nodes = {Node("a", 64, 8), Node("h", 64, 8),
                                     Node("f", 64, 8), Node("s", 64, 8),
                                     Node("r", 64, 8)};
  nodes[0].gpu_models = {"nvidia a100-sxm4-80gb"};
  nodes[1].gpu_models = {"nvidia h100 80gb hbm3"};
  nodes[2].features = {"A100"};
  // An A10 is no A100: types are whole words, not parts of them.
  nodes[3].gpu_models = {"nvidia a10"};
  nodes[3].gpu_types = {"a10"};
  // A type that is no word of the model: "rtx4090" of "... RTX 4090".
  nodes[4].gpu_models = {"nvidia geforce rtx 4090"};
  nodes[4].gpu_types = {"rtx4090"};
  PendingJob job = Job(1, 2, 1, 1, 8);
  job.gpu_type = "a100";
  ScheduleResult r = Schedule(nodes, {job});
  REQUIRE(r.starts.size() == 1);
  std::vector<std::size_t> got;
  for (const NodeShare& share : r.starts[0].shares) {
    got.push_back(share.node.index());
  }
  std::sort(got.begin(), got.end());
  CHECK(got == std::vector<std::size_t>{0, 2});
  for (const auto& [type, node] :
       {std::pair<const char*, std::size_t>{"a10", 3}, {"rtx4090", 4}}) {
    PendingJob one = Job(2, 1, 1, 1, 8);
    one.gpu_type = type;
    r = Schedule(nodes, {one});
    INFO(type);
    REQUIRE(r.starts.size() == 1);
    CHECK(r.starts[0].shares[0].node.index() == node);
  }
  job.gpu_type = "v100";
  r = Schedule(nodes, {job});
  REQUIRE(r.waits.size() == 1);
  CHECK(r.waits[0].reason == "PartitionNodeLimit");
  CHECK_THAT(r.waits[0].detail, Catch::Contains("GPU type v100"));
}

}  // namespace scheduler_test
}  // namespace gantry
