#include "daemon/launch/step_layout.h"

#include <catch2/catch.hpp>

namespace gantry {
namespace step_layout_test {

// A running job on `nodes` nodes with `per_node` tasks and 4 GPUs and 8
// CPUs on each.
v1::JobRecord Job(int nodes, uint32_t per_node) {
  v1::JobRecord job;
  job.set_id(7);
  job.set_attempt(1);
  job.set_state(v1::RUNNING);
  job.mutable_spec()->set_script_once(true);
  for (int i = 0; i < nodes; ++i) {
    v1::NodeAllocation* share = job.add_allocation();
    share->set_node("n" + std::to_string(i + 1));
    share->set_first_rank(static_cast<uint32_t>(i) * per_node);
    share->set_rank_count(per_node);
    share->set_cpus(8);
    for (uint32_t g = 0; g < 4; ++g) share->add_gpu_indices(g + 4);
  }
  return job;
}

// "node:first+count" per share.
std::vector<std::string> Layout(
    const absl::StatusOr<std::vector<v1::NodeAllocation>>& placed) {
  REQUIRE(placed.ok());
  std::vector<std::string> out;
  for (const v1::NodeAllocation& share : *placed) {
    out.push_back(share.node() + ":" + std::to_string(share.first_rank()) +
                  "+" + std::to_string(share.rank_count()));
  }
  return out;
}

using Layouts = std::vector<std::string>;

TEST_CASE("a bare step takes the job's layout", "[step_layout]") {
  v1::LaunchStepRequest request;
  CHECK(Layout(PlaceStep(Job(3, 2), request)) ==
        Layouts{"n1:0+2", "n2:2+2", "n3:4+2"});
}

TEST_CASE("nodes, tasks and tasks per node shape the step", "[step_layout]") {
  v1::LaunchStepRequest request;
  request.set_nodes(2);
  CHECK(Layout(PlaceStep(Job(3, 2), request)) == Layouts{"n1:0+2", "n2:2+2"});
  request.set_ntasks(3);
  CHECK(Layout(PlaceStep(Job(3, 2), request)) == Layouts{"n1:0+2", "n2:2+1"});
  request.set_ntasks_per_node(3);  // a cap; every node asked for gets tasks
  CHECK(Layout(PlaceStep(Job(3, 2), request)) == Layouts{"n1:0+2", "n2:2+1"});
  v1::LaunchStepRequest packed;  // no -N: as few nodes as hold them
  packed.set_ntasks(4);
  packed.set_ntasks_per_node(2);
  CHECK(Layout(PlaceStep(Job(3, 1), packed)) == Layouts{"n1:0+2", "n2:2+2"});
  v1::LaunchStepRequest per_node;
  per_node.set_ntasks_per_node(1);
  CHECK(Layout(PlaceStep(Job(3, 4), per_node)) ==
        Layouts{"n1:0+1", "n2:1+1", "n3:2+1"});
  v1::LaunchStepRequest few;
  few.set_ntasks(2);  // fewer tasks than nodes, no -N: fewer nodes
  CHECK(Layout(PlaceStep(Job(3, 2), few)) == Layouts{"n1:0+1", "n2:1+1"});
}

TEST_CASE("a nodelist picks nodes of the allocation in its order",
          "[step_layout]") {
  v1::LaunchStepRequest request;
  request.add_nodelist("n3");
  request.add_nodelist("n1");
  request.set_ntasks(2);
  CHECK(Layout(PlaceStep(Job(3, 2), request)) == Layouts{"n1:0+1", "n3:1+1"});
  request.set_nodes(3);  // more nodes than named: the others join
  request.set_ntasks(3);
  CHECK(Layout(PlaceStep(Job(3, 2), request)) ==
        Layouts{"n1:0+1", "n2:1+1", "n3:2+1"});
}

TEST_CASE("what does not fit the allocation is refused with the reason",
          "[step_layout]") {
  auto message = [](const v1::LaunchStepRequest& request) {
    absl::StatusOr<std::vector<v1::NodeAllocation>> placed =
        PlaceStep(Job(2, 2), request);
    REQUIRE_FALSE(placed.ok());
    return std::string(placed.status().message());
  };
  v1::LaunchStepRequest too_many;
  too_many.set_nodes(3);
  CHECK(message(too_many).find("asks for 3 nodes; job 7 has 2") !=
        std::string::npos);
  v1::LaunchStepRequest foreign;
  foreign.add_nodelist("n9");
  CHECK(message(foreign).find("node n9 is not in job 7's allocation") !=
        std::string::npos);
  v1::LaunchStepRequest fewer;
  fewer.set_nodes(2);
  fewer.set_ntasks(1);
  CHECK(message(fewer).find("fewer than the 2 nodes") != std::string::npos);
  v1::LaunchStepRequest gpus;
  gpus.set_gpus_per_task(3);
  CHECK(message(gpus).find("the job holds 4 GPU(s) there") !=
        std::string::npos);
  v1::LaunchStepRequest cpus;
  cpus.set_cpus_per_task(5);
  CHECK(message(cpus).find("the job holds 8 CPU(s) there") !=
        std::string::npos);
  v1::LaunchStepRequest crowded;
  crowded.set_ntasks(9);
  crowded.set_ntasks_per_node(4);
  CHECK(message(crowded).find("do not fit") != std::string::npos);
}

TEST_CASE("each task sees the step's view and its own GPUs", "[step_layout]") {
  v1::JobRecord job = Job(2, 2);
  v1::StepRecord step;
  step.set_id(3);
  v1::LaunchStepRequest request;
  request.set_gpus_per_task(2);
  absl::StatusOr<std::vector<v1::NodeAllocation>> placed =
      PlaceStep(job, request);
  REQUIRE(placed.ok());
  for (const v1::NodeAllocation& share : *placed) *step.add_nodes() = share;
  std::map<std::string, std::string> env =
      BuildStepTaskEnvironment(job, step, 2, "10.0.0.1", 1, 1);
  // Step 3 of the record is Slurm's step 2: Slurm counts steps from 0.
  CHECK(env["SLURM_STEP_ID"] == "2");
  CHECK(env["SLURM_PROCID"] == "3");
  CHECK(env["SLURM_LOCALID"] == "1");
  CHECK(env["SLURM_NODEID"] == "1");
  CHECK(env["SLURM_NTASKS"] == "4");
  CHECK(env["SLURM_STEP_NODELIST"] == "n[1-2]");
  CHECK(env["SLURM_JOB_ID"] == "7");
  CHECK(env["RANK"] == "3");
  CHECK(env["WORLD_SIZE"] == "4");
  CHECK(env["MASTER_ADDR"] == "10.0.0.1");
  CHECK(env["CUDA_VISIBLE_DEVICES"] == "6,7");
}

TEST_CASE("a step's status is srun's", "[step_layout]") {
  v1::StepRecord step;
  CHECK(StepExitCode(step) == 0);
  v1::RankExit* a = step.add_exits();
  a->set_exit_code(2);
  CHECK(StepExitCode(step) == 2);
  v1::RankExit* b = step.add_exits();
  b->set_signal(9);
  CHECK(StepExitCode(step) == 137);
}

TEST_CASE("a script_once job runs one rank, on its first node",
          "[step_layout]") {
  v1::JobRecord job = Job(3, 2);
  CHECK(ScriptRanksOn(job, 0) == 1);
  CHECK(ScriptRanksOn(job, 1) == 0);
  CHECK(ScriptRankCount(job) == 1);
  job.mutable_spec()->set_script_once(false);
  CHECK(ScriptRankCount(job) == 6);
}

}  // namespace step_layout_test
}  // namespace gantry
