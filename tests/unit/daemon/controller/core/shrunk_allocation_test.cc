// A job with a node range started on fewer nodes than its maximum: the
// allocation's task layout (tasks per node as at the full size) and the
// variables every rank then sees, all consistent for the smaller world.
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "daemon/controller/core/scheduling_input.h"
#include "daemon/launch/rank_environment.h"

namespace gantry {
namespace shrunk_allocation_test {

v1::JobRecord RangeJob(uint32_t min_nodes, uint32_t max_nodes, uint32_t ntasks,
                       uint32_t per_node) {
  v1::JobRecord job;
  job.set_id(7);
  job.set_attempt(2);
  job.set_master_port(20001);
  v1::JobSpec& spec = *job.mutable_spec();
  spec.set_nodes(max_nodes);
  spec.set_min_nodes(min_nodes);
  spec.set_ntasks(ntasks);
  spec.set_ntasks_per_node(per_node);
  spec.set_cpus_per_task(1);
  return job;
}

JobStart StartOn(uint32_t nodes) {
  JobStart start;
  start.job_id = JobId(7);
  for (uint32_t i = 0; i < nodes; ++i) {
    NodeShare share;
    share.node = NodeId(i);
    share.cpus = 4;
    start.shares.push_back(share);
  }
  return start;
}

TEST_CASE("A shrunk attempt keeps the full size's tasks per node",
          "[node_range][env]") {
  struct Case {
    const char* what;
    uint32_t min, max, ntasks, per_node, got;
    std::vector<uint32_t> counts;
    std::string tasks_per_node;
    std::string nodelist;
  };
  const std::vector<Case> cases = {
      {"--ntasks-per-node=2 --nodes=3-4 on 3",
       3,
       4,
       0,
       2,
       3,
       {2, 2, 2},
       "2(x3)",
       "n[0-2]"},
      {"the same on 4", 3, 4, 0, 2, 4, {2, 2, 2, 2}, "2(x4)", "n[0-3]"},
      {"-n 10 --nodes=3-4 on 4: 3,3,2,2",
       3,
       4,
       10,
       3,
       4,
       {3, 3, 2, 2},
       "3(x2),2(x2)",
       "n[0-3]"},
      {"-n 10 --nodes=3-4 on 3: the first three nodes' tasks",
       3,
       4,
       10,
       3,
       3,
       {3, 3, 2},
       "3(x2),2",
       "n[0-2]"},
      {"48-64 at 8 per node on 50", 48, 64, 0, 8, 50,
       std::vector<uint32_t>(50, 8), "8(x50)", "n[0-49]"},
  };
  std::vector<std::string> names;
  for (int i = 0; i < 64; ++i) names.push_back("n" + std::to_string(i));
  std::vector<const std::string*> name_ptrs;
  for (const std::string& name : names) name_ptrs.push_back(&name);
  for (const Case& c : cases) {
    INFO(c.what);
    v1::JobRecord job = RangeJob(c.min, c.max, c.ntasks, c.per_node);
    SetAllocation(StartOn(c.got), name_ptrs, job);
    REQUIRE(job.allocation_size() == static_cast<int>(c.got));
    uint32_t world = 0;
    for (int i = 0; i < job.allocation_size(); ++i) {
      CHECK(job.allocation(i).rank_count() == c.counts[i]);
      CHECK(job.allocation(i).first_rank() == world);
      world += job.allocation(i).rank_count();
    }
    std::set<std::string> seen_ranks;
    for (uint32_t node = 0; node < c.got; ++node) {
      for (uint32_t local = 0; local < c.counts[node]; ++local) {
        auto env = BuildRankEnvironment(job, "10.0.0.1", node, local);
        CHECK(env["WORLD_SIZE"] == std::to_string(world));
        CHECK(env["SLURM_NTASKS"] == std::to_string(world));
        CHECK(env["SLURM_NNODES"] == std::to_string(c.got));
        CHECK(env["SLURM_JOB_NUM_NODES"] == std::to_string(c.got));
        CHECK(env["SLURM_TASKS_PER_NODE"] == c.tasks_per_node);
        CHECK(env["SLURM_JOB_NODELIST"] == c.nodelist);
        CHECK(env["LOCAL_WORLD_SIZE"] == std::to_string(c.counts[node]));
        CHECK(env["MASTER_ADDR"] == "10.0.0.1");
        seen_ranks.insert(env["RANK"]);
      }
    }
    CHECK(seen_ranks.size() == world);  // every rank once
  }
}

}  // namespace shrunk_allocation_test
}  // namespace gantry
