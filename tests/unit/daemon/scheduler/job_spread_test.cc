// SpreadJob and LargestNodes: the node count of a job that does not say -N
// (-n by CPUs, -G/--gpus by GPUs) and the per-node shape it gets.
#include "daemon/scheduler/job_spread.h"

#include <catch2/catch.hpp>

namespace gantry {
namespace job_spread_test {

// const char*, not std::string defaults: gcc 12 warns (-Wrestrict) on
// those falsely.
NodeSnapshot Node(uint32_t cpus, uint32_t gpus, const char* partition = "p",
                  const char* gpu_model = "nvidia h100") {
  NodeSnapshot node;
  node.partitions = {partition};
  node.cpus_total = cpus;
  node.gpus_total = gpus;
  for (uint32_t i = 0; i < gpus; ++i) node.gpu_models.push_back(gpu_model);
  return node;
}

PendingJob Job(const char* gpu_type = "") {
  PendingJob job;
  job.partition = "p";
  job.gpu_type = gpu_type;
  return job;
}

LargestNodes Of(const std::vector<NodeSnapshot>& nodes, const PendingJob& job) {
  LargestNodes largest;
  for (const NodeSnapshot& node : nodes) largest.Add(node, job);
  return largest;
}

TEST_CASE("sbatch -G 8 on 4-GPU nodes is 2 nodes with 4 GPUs each",
          "[job_spread]") {
  const LargestNodes largest = Of({Node(64, 4), Node(64, 4)}, Job());
  SpreadRequest request;
  request.gpus = 8;
  const JobSpread spread = SpreadJob(request, largest, 1000);
  CHECK(spread.nodes == 2u);
  CHECK(spread.gpus_per_node == 4u);
  CHECK(spread.ntasks_per_node == 1u);
  CHECK_FALSE(spread.gpus_rounded_up);
}

TEST_CASE("sbatch --gpus fits on one node when a node has enough",
          "[job_spread]") {
  const LargestNodes largest = Of({Node(64, 4), Node(64, 8)}, Job());
  SpreadRequest request;
  request.gpus = 8;
  const JobSpread spread = SpreadJob(request, largest, 1000);
  CHECK(spread.nodes == 1u);
  CHECK(spread.gpus_per_node == 8u);
}

TEST_CASE("sbatch --gpus that does not divide evenly rounds up per node",
          "[job_spread]") {
  const LargestNodes largest = Of({Node(64, 4)}, Job());
  SpreadRequest six;
  six.gpus = 6;  // 2 nodes of 3: exactly 6
  JobSpread spread = SpreadJob(six, largest, 1000);
  CHECK(spread.nodes == 2u);
  CHECK(spread.gpus_per_node == 3u);
  CHECK_FALSE(spread.gpus_rounded_up);
  SpreadRequest seven;
  seven.gpus = 7;  // 2 nodes of 4: one more than asked
  spread = SpreadJob(seven, largest, 1000);
  CHECK(spread.nodes == 2u);
  CHECK(spread.gpus_per_node == 4u);
  CHECK(spread.gpus_rounded_up);
}

TEST_CASE("sbatch --gpus with -N spreads over the given nodes",
          "[job_spread]") {
  const LargestNodes largest = Of({Node(64, 8)}, Job());
  SpreadRequest request;
  request.nodes = 4;
  request.gpus = 8;
  const JobSpread spread = SpreadJob(request, largest, 1000);
  CHECK(spread.nodes == 4u);
  CHECK(spread.gpus_per_node == 2u);
}

TEST_CASE(
    "option -n spreads by the largest node's CPUs, --gpus by its GPUs, the "
    "larger count wins",
    "[job_spread]") {
  const LargestNodes largest = Of({Node(8, 4)}, Job());
  SpreadRequest tasks;
  tasks.ntasks = 16;  // 2 nodes of 8 CPUs
  tasks.gpus = 4;     // 1 node would do
  JobSpread spread = SpreadJob(tasks, largest, 1000);
  CHECK(spread.nodes == 2u);
  CHECK(spread.ntasks_per_node == 8u);
  CHECK(spread.gpus_per_node == 2u);

  SpreadRequest gpus;
  gpus.ntasks = 12;  // 2 nodes of 8 CPUs
  gpus.gpus = 12;    // 3 nodes of 4 GPUs
  spread = SpreadJob(gpus, largest, 1000);
  CHECK(spread.nodes == 3u);
  CHECK(spread.ntasks_per_node == 4u);
  CHECK(spread.gpus_per_node == 4u);
}

TEST_CASE("sbatch -n 8 --ntasks-per-node=4 is 2 nodes", "[job_spread]") {
  SpreadRequest request;
  request.ntasks = 8;
  request.ntasks_per_node = 4;
  const JobSpread spread = SpreadJob(request, LargestNodes(), 1000);
  CHECK(spread.nodes == 2u);
  CHECK(spread.ntasks_per_node == 4u);
}

TEST_CASE("only nodes of the job's partition and GPU type count",
          "[job_spread]") {
  const std::vector<NodeSnapshot> nodes = {
      Node(64, 8, "other"), Node(64, 2, "p", "nvidia a100-sxm4-80gb"),
      Node(64, 4, "p", "nvidia h100")};
  CHECK(Of(nodes, Job()).gpus() == 4u);
  CHECK(Of(nodes, Job("a100")).gpus() == 2u);
  SpreadRequest request;
  request.gpus = 8;
  CHECK(SpreadJob(request, Of(nodes, Job("a100")), 1000).nodes == 4u);
  CHECK(SpreadJob(request, Of(nodes, Job()), 1000).nodes == 2u);
}

TEST_CASE("no node known: one node, and the node count is capped",
          "[job_spread]") {
  SpreadRequest request;
  request.gpus = 8;
  JobSpread spread = SpreadJob(request, LargestNodes(), 1000);
  CHECK(spread.nodes == 1u);
  CHECK(spread.gpus_per_node == 8u);
  const LargestNodes largest = Of({Node(1, 1)}, Job());
  request.gpus = 100;
  spread = SpreadJob(request, largest, 10);
  CHECK(spread.nodes == 10u);
  CHECK(spread.gpus_per_node == 10u);
}

}  // namespace job_spread_test
}  // namespace gantry
