// GPU choice by job shape (daemon/scheduler/gpu_choice.h) on the layouts of
// real servers: the places below are what the agent reads from their hwloc
// exports in ../shared/data/hwloc
// (tests/unit/agent/discovery/gpu_locality_test.cc checks them against the
// files), plus small made-up cases.
#include "daemon/scheduler/gpu_choice.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "daemon/scheduler/scheduler_placement.h"

namespace gantry {
namespace gpu_choice_test {

using scheduler_internal::ChooseGpus;
using scheduler_internal::ChooseGpusFor;
using scheduler_internal::ChooseGpusPacked;
using Gpus = std::vector<uint32_t>;

// Meluxina (4 A100, 2 HDR): GPUs 0 and 1 share mlx5_0 and package 0, 2 and
// 3 share mlx5_1 and package 1; each GPU behind its own switch and host
// bridge, on its own NUMA node (NPS4).
NodeSnapshot Meluxina() {
  NodeSnapshot node;
  node.gpus_total = 4;
  node.gpu_hca = {"mlx5_0", "mlx5_0", "mlx5_1", "mlx5_1"};
  node.gpu_groups = GpuGroups({
      {"0000:01:00.0", "0000:01:00.0", "0000:[00-07]", 3, 0},
      {"0000:41:00.0", "0000:41:00.0", "0000:[40-47]", 1, 0},
      {"0000:81:00.0", "0000:81:00.0", "0000:[80-87]", 7, 1},
      {"0000:c1:00.0", "0000:c1:00.0", "0000:[c0-c8]", 5, 1},
  });
  return node;
}

// DGX-2H (16 V100): pairs behind an inner switch, fours behind an outer one
// (one host bridge each), eight per package.
std::vector<GpuPlace> Dgx2hPlaces() {
  static const char* const kInner[] = {"32", "37", "55", "5a",
                                       "b5", "ba", "de", "e3"};
  static const char* const kOuter[] = {"2c", "4f", "af", "d8"};
  static const char* const kBridge[] = {"2b", "4e", "ae", "d7"};
  std::vector<GpuPlace> places;
  for (int g = 0; g < 16; ++g) {
    places.push_back(
        {kInner[g / 2], kOuter[g / 4], kBridge[g / 4], g / 8, g / 8});
  }
  return places;
}

PendingJob Job(uint32_t nodes, uint32_t gpus) {
  PendingJob job;
  job.nodes = nodes;
  job.gpus_per_node = gpus;
  return job;
}

TEST_CASE("a one-node job's GPUs share a package, a gang's share no HCA") {
  const NodeSnapshot node = Meluxina();
  const Gpus all = {0, 1, 2, 3};
  // The case: two GPUs of one job on one node.
  CHECK(ChooseGpusFor(Job(1, 2), node, all) == Gpus{0, 1});
  // The same two GPUs per node for a 2-node job: one per HCA rail.
  CHECK(ChooseGpusFor(Job(2, 2), node, all) == Gpus{0, 2});
  // With GPU 0 taken, the one-node job goes where a whole package is free.
  CHECK(ChooseGpusFor(Job(1, 2), node, {1, 2, 3}) == Gpus{2, 3});
  // One GPU: the package already in use, keeping package 1 whole.
  CHECK(ChooseGpusFor(Job(1, 1), node, {1, 2, 3}) == Gpus{1});
  CHECK(ChooseGpusFor(Job(1, 3), node, all) == Gpus{0, 1, 2});
}

TEST_CASE("DGX-2H: the inner switch first, then the outer one") {
  const std::vector<GpuPlace> places = Dgx2hPlaces();
  const std::vector<uint32_t> groups = GpuGroups(places);
  Gpus all;
  for (uint32_t g = 0; g < 16; ++g) all.push_back(g);
  CHECK(ChooseGpusPacked(all, groups, 2) == Gpus{0, 1});
  CHECK(ChooseGpusPacked(all, groups, 4) == Gpus{0, 1, 2, 3});
  CHECK(ChooseGpusPacked(all, groups, 8) == Gpus{0, 1, 2, 3, 4, 5, 6, 7});
  // GPU 0 busy: a 1-GPU job takes its switch partner, a 2-GPU job the
  // next whole pair under the same outer switch.
  const Gpus no0 = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  CHECK(ChooseGpusPacked(no0, groups, 1) == Gpus{1});
  CHECK(ChooseGpusPacked(no0, groups, 2) == Gpus{2, 3});
  // A 4-GPU job does not break into the quad with a busy GPU.
  CHECK(ChooseGpusPacked(no0, groups, 4) == Gpus{4, 5, 6, 7});
  // 3 GPUs: a quad's pair plus the lone GPU of the broken pair.
  CHECK(ChooseGpusPacked(no0, groups, 3) == Gpus{1, 2, 3});
  // Free GPUs scattered one per pair: two under one outer switch.
  CHECK(ChooseGpusPacked({1, 3, 5, 9, 12}, groups, 2) == Gpus{1, 3});
  // Across packages only when no package holds the job.
  CHECK(ChooseGpusPacked({6, 7, 8, 9, 10}, groups, 3) == Gpus{8, 9, 10});
  CHECK(ChooseGpusPacked({6, 7, 8, 9}, groups, 3) == Gpus{6, 7, 8});
}

TEST_CASE("GPUs without locality: the lowest free ones") {
  CHECK(ChooseGpusPacked({1, 2, 5, 6}, {}, 2) == Gpus{1, 2});
  CHECK(ChooseGpusPacked({1, 2, 5, 6}, {}, 4) == Gpus{1, 2, 5, 6});
  CHECK(ChooseGpusPacked({1, 2, 5, 6}, {}, 0).empty());
}

TEST_CASE("groups nest, unknown places split nothing, no switch shares none") {
  // Two GPUs on root ports of one host bridge (AWS g4dn), then two with
  // nothing known.
  const std::vector<uint32_t> groups = GpuGroups({
      {"", "", "0000:[17-19]", 0, 0},
      {"", "", "0000:[17-19]", 0, 0},
      {"", "", "", -1, -1},
      {"", "", "", -1, -1},
  });
  REQUIRE(groups.size() == 4 * kGpuLevels);
  const auto at = [&](int gpu, int level) {
    return groups[static_cast<std::size_t>(gpu * kGpuLevels + level)];
  };
  CHECK(at(0, 0) != at(1, 0));  // no shared switch
  CHECK(at(0, 2) == at(1, 2));  // one host bridge
  CHECK(at(2, 4) == at(3, 4));  // unknown packages: not split
  CHECK(at(2, 2) == at(3, 2));
  CHECK(at(0, 4) != at(2, 4));
  // The same switch name under another host bridge is another switch.
  const std::vector<uint32_t> renamed = GpuGroups({
      {"s", "s", "a", 0, 0},
      {"s", "s", "b", 0, 0},
  });
  CHECK(renamed[0] != renamed[kGpuLevels]);
}

TEST_CASE("a range job that may span nodes keeps the rail rule") {
  const NodeSnapshot node = Meluxina();
  PendingJob job = Job(4, 2);
  job.min_nodes = 1;
  CHECK(ChooseGpusFor(job, node, {0, 1, 2, 3}) ==
        ChooseGpus({0, 1, 2, 3}, node.gpu_hca, 2));
}

}  // namespace gpu_choice_test
}  // namespace gantry
