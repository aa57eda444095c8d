#include "daemon/launch/step_resources.h"

#include <catch2/catch.hpp>

namespace gantry {
namespace step_resources_test {

// A running job on one node with 4 CPUs and GPUs 4-7.
v1::JobRecord Job() {
  v1::JobRecord job;
  job.set_id(7);
  job.set_attempt(1);
  job.set_state(v1::RUNNING);
  v1::NodeAllocation* share = job.add_allocation();
  share->set_node("n1");
  share->set_rank_count(4);
  share->set_cpus(4);
  for (uint32_t g = 4; g < 8; ++g) share->add_gpu_indices(g);
  return job;
}

std::vector<v1::NodeAllocation> Tasks(uint32_t tasks) {
  v1::NodeAllocation share;
  share.set_node("n1");
  share.set_rank_count(tasks);
  return {share};
}

// Records a fitted step as running in `job`.
void Run(v1::JobRecord& job, const std::vector<v1::NodeAllocation>& placed,
         bool overlap = false) {
  v1::StepRecord* step = job.add_steps();
  step->set_id(static_cast<uint32_t>(job.steps_size()));
  step->set_attempt(job.attempt());
  step->set_overlap(overlap);
  for (const v1::NodeAllocation& share : placed) *step->add_nodes() = share;
}

TEST_CASE("exact one-CPU steps pack the job's CPUs and the fifth is busy",
          "[step_resources]") {
  v1::JobRecord job = Job();
  StepResourceAsk ask{.exact = true};
  std::string busy;
  for (int i = 0; i < 4; ++i) {
    std::vector<v1::NodeAllocation> placed = Tasks(1);
    absl::StatusOr<bool> fits = FitStepResources(job, ask, placed, busy);
    REQUIRE(fits.ok());
    REQUIRE(*fits);
    CHECK(placed[0].cpus() == 1);
    CHECK(placed[0].gpu_indices().empty());  // an exact step asked for none
    Run(job, placed);
  }
  std::vector<v1::NodeAllocation> fifth = Tasks(1);
  absl::StatusOr<bool> fits = FitStepResources(job, ask, fifth, busy);
  REQUIRE(fits.ok());
  CHECK_FALSE(*fits);
  CHECK(busy == "n1");
  // One ends: it fits.
  job.mutable_steps(0)->set_end_time_ms(1);
  fits = FitStepResources(job, ask, fifth, busy);
  REQUIRE(fits.ok());
  CHECK(*fits);
}

TEST_CASE("a step holds all the job's CPUs and GPUs unless exact",
          "[step_resources]") {
  v1::JobRecord job = Job();
  std::string busy;
  std::vector<v1::NodeAllocation> whole = Tasks(1);
  REQUIRE(*FitStepResources(job, {}, whole, busy));
  CHECK(whole[0].cpus() == 4);
  CHECK(whole[0].gpu_indices_size() == 4);
  Run(job, whole);
  std::vector<v1::NodeAllocation> next = Tasks(1);
  CHECK_FALSE(*FitStepResources(job, {.exact = true}, next, busy));
  // --overlap always fits, and what it would hold is not counted.
  std::vector<v1::NodeAllocation> overlap = Tasks(1);
  REQUIRE(*FitStepResources(job, {.overlap = true}, overlap, busy));
  CHECK(overlap[0].gpu_indices_size() == 4);
  // Steps of an earlier attempt hold nothing.
  job.set_attempt(2);
  CHECK(*FitStepResources(job, {.exact = true}, next, busy));
}

TEST_CASE("GPU steps get GPUs no running step holds", "[step_resources]") {
  v1::JobRecord job = Job();
  std::string busy;
  StepResourceAsk ask{.exact = true, .gpus_per_task = 1};
  std::vector<v1::NodeAllocation> first = Tasks(1);
  REQUIRE(*FitStepResources(job, ask, first, busy));
  Run(job, first);
  std::vector<v1::NodeAllocation> second = Tasks(2);
  REQUIRE(*FitStepResources(job, ask, second, busy));
  CHECK(first[0].gpu_indices(0) == 4);
  CHECK(std::vector<uint32_t>(second[0].gpu_indices().begin(),
                              second[0].gpu_indices().end()) ==
        std::vector<uint32_t>{5, 6});
  Run(job, second);
  std::vector<v1::NodeAllocation> third = Tasks(2);
  CHECK_FALSE(*FitStepResources(job, ask, third, busy));
}

TEST_CASE("a step that could never fit is an error, not a wait",
          "[step_resources]") {
  v1::JobRecord job = Job();
  std::string busy;
  std::vector<v1::NodeAllocation> placed = Tasks(2);
  absl::StatusOr<bool> fits =
      FitStepResources(job, {.exact = true, .cpus_per_task = 3}, placed, busy);
  REQUIRE_FALSE(fits.ok());
  CHECK(fits.status().message().find("2 task(s) x 3 CPU(s) on n1 but the job "
                                     "holds 4") != std::string::npos);
  placed = Tasks(3);
  fits =
      FitStepResources(job, {.exact = true, .gpus_per_task = 2}, placed, busy);
  REQUIRE_FALSE(fits.ok());
  placed = Tasks(1);
  placed[0].set_node("elsewhere");
  CHECK_FALSE(FitStepResources(job, {}, placed, busy).ok());
}

}  // namespace step_resources_test
}  // namespace gantry
