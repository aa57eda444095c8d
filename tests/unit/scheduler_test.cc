// The scheduler core fed by hand: gang placement, FIFO blocking, reasons.
#include "daemon/scheduler.h"

#include <catch2/catch.hpp>

namespace gantry {
namespace {

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
  j.id = id;
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
  CHECK(r.starts[0].shares[0].node_index == 0);
  CHECK(r.starts[0].shares[1].node_index == 2);
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
  CHECK(r.waits[0].job_id == 3);
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
  CHECK(r.waits[0].job_id == 1);
  CHECK(r.waits[0].reason == "PartitionNodeLimit");
  CHECK_THAT(r.waits[0].detail, Catch::Contains("has 2 such node(s)"));
  CHECK(r.waits[1].job_id == 2);  // asks for a GPU no node has
  CHECK(r.waits[1].reason == "PartitionNodeLimit");
  REQUIRE(r.starts.size() == 1);
  CHECK(r.starts[0].job_id == 3);
}

TEST_CASE("unreachable nodes and other partitions are not used",
          "[scheduler]") {
  std::vector<NodeSnapshot> nodes = {Node("a", 2), Node("b", 2), Node("c", 2)};
  nodes[0].schedulable = false;
  nodes[1].partitions = {"debug"};
  ScheduleResult r = Schedule(nodes, {Job(1, 1, 1, 2), Job(2, 1, 1, 2)});
  REQUIRE(r.starts.size() == 1);
  CHECK(r.starts[0].shares[0].node_index == 2);
  REQUIRE(r.waits.size() == 1);
  CHECK(r.waits[0].reason == "Resources");
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

}  // namespace
}  // namespace gantry

namespace gantry {
namespace {

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
  CHECK(r.starts[0].shares[0].node_index == 2);  // the spare
  CHECK(r.starts[0].shares[1].node_index == 0);
}

}  // namespace
}  // namespace gantry
