// The environment each rank gets, for a 2-node job with an uneven split.
#include "daemon/launch/rank_environment.h"

#include <catch2/catch.hpp>
#include <string>

#include "common/job_restarts.h"

namespace gantry {
namespace rank_environment_test {

v1::JobRecord TwoNodeJob() {
  v1::JobRecord job;
  job.set_id(42);
  job.set_user("alice");
  job.set_uid(1000);
  job.set_attempt(1);
  job.set_master_port(23456);
  v1::JobSpec& spec = *job.mutable_spec();
  spec.set_name("train");
  spec.set_nodes(2);
  spec.set_ntasks(3);
  spec.set_cpus_per_task(4);
  spec.set_partition("main");
  spec.set_submit_dir("/home/alice");
  v1::NodeAllocation* a = job.add_allocation();
  a->set_node("gpu01");
  a->set_first_rank(0);
  a->set_rank_count(2);
  a->set_cpus(8);
  a->add_gpu_indices(2);
  a->add_gpu_indices(3);
  v1::NodeAllocation* b = job.add_allocation();
  b->set_node("gpu02");
  b->set_first_rank(2);
  b->set_rank_count(1);
  b->set_cpus(4);
  return job;
}

TEST_CASE("rank variables follow the allocation", "[env]") {
  v1::JobRecord job = TwoNodeJob();
  auto env = BuildRankEnvironment(job, "10.0.0.1", 1, 0);
  CHECK(env["SLURM_JOB_ID"] == "42");
  CHECK(env["SLURM_PROCID"] == "2");
  CHECK(env["RANK"] == "2");
  CHECK(env["SLURM_LOCALID"] == "0");
  CHECK(env["SLURM_NODEID"] == "1");
  CHECK(env["SLURM_NNODES"] == "2");
  CHECK(env["SLURM_NTASKS"] == "3");
  CHECK(env["WORLD_SIZE"] == "3");
  CHECK(env["LOCAL_WORLD_SIZE"] == "1");
  CHECK(env["SLURM_JOB_NODELIST"] == "gpu[01-02]");
  CHECK(env["SLURM_TASKS_PER_NODE"] == "2,1");
  CHECK(env["SLURM_CPUS_PER_TASK"] == "4");
  CHECK(env["MASTER_ADDR"] == "10.0.0.1");
  CHECK(env["MASTER_PORT"] == "23456");
  CHECK(env["SLURMD_NODENAME"] == "gpu02");
  CHECK(env["CUDA_VISIBLE_DEVICES"].empty());
  CHECK(env["GANTRY_RESTART_COUNT"] == "0");

  env = BuildRankEnvironment(job, "10.0.0.1", 0, 1);
  CHECK(env["RANK"] == "1");
  CHECK(env["LOCAL_RANK"] == "1");
  CHECK(env["CUDA_VISIBLE_DEVICES"] == "2,3");
  CHECK(env["SLURM_GPUS_ON_NODE"] == "2");
}

TEST_CASE("SLURM_GTIDS lists the node's global ranks, and the dependency shows",
          "[env]") {
  v1::JobRecord job = TwoNodeJob();
  CHECK(BuildRankEnvironment(job, "10.0.0.1", 0, 0)["SLURM_GTIDS"] == "0,1");
  CHECK(BuildRankEnvironment(job, "10.0.0.1", 1, 0)["SLURM_GTIDS"] == "2");
  CHECK(BuildRankEnvironment(job, "10.0.0.1", 0, 0)
            .count("SLURM_JOB_DEPENDENCY") == 0);
  job.mutable_spec()->set_dependency("afterok:7");
  CHECK(BuildRankEnvironment(job, "10.0.0.1", 0, 0)["SLURM_JOB_DEPENDENCY"] ==
        "afterok:7");
}

TEST_CASE("the job's account and QOS, with Slurm's defaults", "[env]") {
  v1::JobRecord job = TwoNodeJob();
  // Stored before the fields existed: the default QOS, no account.
  auto env = BuildRankEnvironment(job, "10.0.0.1", 0, 0);
  CHECK(env["SLURM_JOB_QOS"] == "normal");
  CHECK(env.count("SLURM_JOB_ACCOUNT") == 0);
  job.mutable_spec()->set_account("physics");
  job.mutable_spec()->set_qos("high");
  env = BuildRankEnvironment(job, "10.0.0.1", 0, 0);
  CHECK(env["SLURM_JOB_ACCOUNT"] == "physics");
  CHECK(env["SLURM_JOB_QOS"] == "high");
  CHECK(env.count("SLURM_CLUSTER_NAME") == 0);  // the controller's to add
}

TEST_CASE("tasks per node uses Slurm's compressed form", "[env]") {
  v1::JobRecord job;
  for (uint32_t count : {2u, 2u, 2u, 1u})
    job.add_allocation()->set_rank_count(count);
  CHECK(TasksPerNodeString(job) == "2(x3),1");
}

TEST_CASE("master port stays in its range and varies by attempt", "[env]") {
  for (uint64_t id = 1; id < 2000; ++id) {
    uint32_t port = ChooseMasterPort(12345, id, 1);
    CHECK(port >= 20000);
    CHECK(port < 40000);
  }
  CHECK(ChooseMasterPort(1, 7, 1) != ChooseMasterPort(1, 7, 2));
  CHECK(ChooseMasterPort(1, 7, 1) != ChooseMasterPort(1, 8, 1));
  CHECK(ChooseMasterPort(1, 7, 1) != ChooseMasterPort(2, 7, 1));
}

TEST_CASE("array tasks see their index and the array's shape", "[env]") {
  v1::JobRecord job = TwoNodeJob();
  auto plain = BuildRankEnvironment(job, "10.0.0.1", 0, 0);
  CHECK(plain.count("SLURM_ARRAY_JOB_ID") == 0);
  CHECK(plain.count("GANTRY_ARRAY_TASK_ID") == 0);

  job.set_array_job_id(40);
  job.set_array_task_id(4);
  v1::JobArrayInfo& array = *job.mutable_array();
  array.set_task_count(3);
  array.set_min_task_id(0);
  array.set_max_task_id(4);
  array.set_step(2);
  auto env = BuildRankEnvironment(job, "10.0.0.1", 1, 0);
  for (const char* prefix : {"SLURM_ARRAY_", "GANTRY_ARRAY_"}) {
    INFO(prefix);
    const std::string p(prefix);
    CHECK(env[p + "JOB_ID"] == "40");
    CHECK(env[p + "TASK_ID"] == "4");
    CHECK(env[p + "TASK_COUNT"] == "3");
    CHECK(env[p + "TASK_MIN"] == "0");
    CHECK(env[p + "TASK_MAX"] == "4");
    CHECK(env[p + "TASK_STEP"] == "2");
  }
  // The task's own id stays its job id.
  CHECK(env["SLURM_JOB_ID"] == "42");
}

TEST_CASE(
    "the restart count has one definition: pre-flight attempts are "
    "not restarts",
    "[env]") {
  v1::JobRecord job = TwoNodeJob();
  const auto end_attempt = [&job](const char* reason) {
    v1::AttemptRecord* attempt = job.add_attempts();
    attempt->set_attempt(job.attempt());
    attempt->set_end_reason(reason);
    job.set_attempt(job.attempt() + 1);
  };
  CHECK(JobRestartCount(job) == 0);
  // A pre-flight swapped a node out before any rank started.
  end_attempt("Preflight");
  job.add_attempts()->set_attempt(job.attempt());
  CHECK(JobRestartCount(job) == 0);
  CHECK(BuildRankEnvironment(job, "10.0.0.1", 0, 0)["SLURM_RESTART_COUNT"] ==
        "0");
  // A requeue, then a node failure: one each.
  job.mutable_attempts()->RemoveLast();
  end_attempt("Requeued");
  end_attempt("NodeFail");
  job.add_attempts()->set_attempt(job.attempt());
  CHECK(JobRestartCount(job) == 2);
  auto env = BuildRankEnvironment(job, "10.0.0.1", 0, 0);
  CHECK(env["SLURM_RESTART_COUNT"] == "2");
  CHECK(env["GANTRY_RESTART_COUNT"] == "2");
}

}  // namespace rank_environment_test
}  // namespace gantry
