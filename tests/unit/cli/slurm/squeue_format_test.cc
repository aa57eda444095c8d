// squeue's --format fields and the Slurm words (states, signals) the CLI
// takes.
#include "cli/slurm/squeue_format.h"

#include <csignal>

#include <catch2/catch.hpp>

#include "cli/slurm/slurm_words.h"
#include "common/signal_name.h"

namespace gantry::cli {
namespace squeue_format_test {

v1::JobRecord RunningJob() {
  v1::JobRecord job;
  job.set_id(42);
  job.set_user("alice");
  job.set_state(v1::RUNNING);
  job.set_start_time_ms(1'000'000);
  job.mutable_spec()->set_name("pretrain-llama");
  job.mutable_spec()->set_partition("main");
  job.mutable_spec()->set_nodes(2);
  job.mutable_spec()->set_gpus_per_node(8);
  job.mutable_spec()->set_time_limit_seconds(3600);
  for (const char* node : {"node01", "node02"}) {
    v1::NodeAllocation* share = job.add_allocation();
    share->set_node(node);
    share->set_cpus(4);
  }
  return job;
}

TEST_CASE("fields render with squeue's widths and alignment",
          "[squeue_format]") {
  absl::StatusOr<SqueueFormat> format =
      SqueueFormat::Parse("%.6i|%-8j|%t|%M|%D|%C|%R|%b|%l|%%");
  REQUIRE(format.ok());
  // 65 s after the start: 1:05 used.
  CHECK(format->Row(RunningJob(), 1'065'000) ==
        "    42|pretrain|R|1:05|2|8|node[01-02]|gres/gpu:8|1:00:00|%\n");
  CHECK(format->Header() ==
        " JOBID|NAME    |ST|TIME|NODES|CPUS|NODELIST(REASON)|TRES_PER_NODE|"
        "TIME_LIMIT|%\n");
}

TEST_CASE("a pending job shows its reason in %R", "[squeue_format]") {
  v1::JobRecord job;
  job.set_id(7);
  job.set_state(v1::PENDING);
  job.set_reason("Resources");
  absl::StatusOr<SqueueFormat> format = SqueueFormat::Parse("%i %T %R %S");
  REQUIRE(format.ok());
  CHECK(format->Row(job, 0) == "7 PENDING (Resources) N/A\n");
}

TEST_CASE("array tasks show as ARRAYID_TASK", "[squeue_format]") {
  v1::JobRecord task = RunningJob();
  task.set_id(45);
  task.set_array_job_id(40);
  task.set_array_task_id(10);
  absl::StatusOr<SqueueFormat> format = SqueueFormat::Parse("%i|%A|%F|%K");
  REQUIRE(format.ok());
  CHECK(format->Header() == "JOBID|JOBID|ARRAY_JOB_ID|ARRAY_TASK_ID\n");
  CHECK(format->Row(task, 1'065'000) == "40_10|45|40|10\n");
  // Other jobs: their own id, and N/A for the index, as squeue.
  CHECK(format->Row(RunningJob(), 1'065'000) == "42|42|42|N/A\n");
}

TEST_CASE("the default layout is squeue's", "[squeue_format]") {
  absl::StatusOr<SqueueFormat> format =
      SqueueFormat::Parse(kSqueueDefaultFormat);
  REQUIRE(format.ok());
  CHECK(format->Header() ==
        "             JOBID PARTITION     NAME     USER ST       TIME  NODES "
        "NODELIST(REASON)\n");
}

TEST_CASE("unknown fields are refused", "[squeue_format]") {
  for (const char* bad : {"%i %~", "%", "%.18", "%999999i"}) {
    INFO(bad);
    absl::StatusOr<SqueueFormat> format = SqueueFormat::Parse(bad);
    REQUIRE(!format.ok());
    CHECK(format.status().code() == absl::StatusCode::kInvalidArgument);
  }
}

TEST_CASE("job states in long and short forms", "[slurm_words]") {
  absl::StatusOr<std::set<v1::JobState>> states =
      ParseJobStates("PD,running,oom");
  REQUIRE(states.ok());
  CHECK(*states ==
        std::set<v1::JobState>{v1::PENDING, v1::RUNNING, v1::OUT_OF_MEMORY});
  REQUIRE(ParseJobStates("all").ok());
  CHECK(ParseJobStates("all")->size() == 9);
  CHECK(*ParseJobStates("DL") == std::set<v1::JobState>{v1::DEADLINE});
  CHECK(ParseJobStates("canceled")->count(v1::CANCELLED) == 1);
  CHECK(!ParseJobStates("sleeping").ok());
  // Slurm's states no Gantry job is in select none, without an error.
  CHECK(*ParseJobStates("CG,suspended") ==
        std::set<v1::JobState>{v1::JOB_STATE_UNSPECIFIED});
  CHECK(!ParseJobStates(",").ok());
}

TEST_CASE("signals by name or number", "[slurm_words]") {
  CHECK(*ParseSignal("USR1") == SIGUSR1);
  CHECK(*ParseSignal("SIGusr2") == SIGUSR2);
  CHECK(*ParseSignal("15") == SIGTERM);
  CHECK(!ParseSignal("0").ok());
  CHECK(!ParseSignal("USR3").ok());
  CHECK(!ParseSignal("").ok());
}

TEST_CASE("pending array tasks fold into one line", "[squeue_format]") {
  std::vector<v1::JobRecord> records;
  for (uint32_t task = 0; task < 6; ++task) {
    v1::JobRecord job;
    job.set_id(100 + task);
    job.set_array_job_id(100);
    job.set_array_task_id(task);
    job.mutable_array()->set_max_running(2);
    job.set_state(task < 2 ? v1::RUNNING : v1::PENDING);
    records.push_back(job);
  }
  records[5].set_array_task_id(9);  // indices 2-4 and 9 pending
  v1::JobRecord other = RunningJob();
  std::vector<const v1::JobRecord*> jobs;
  for (const v1::JobRecord& job : records) jobs.push_back(&job);
  jobs.push_back(&other);
  std::vector<SqueueLine> lines = FoldPendingArrayTasks(jobs);
  REQUIRE(lines.size() == 4);
  CHECK(lines[0].folded_tasks.empty());
  CHECK(lines[2].job == &records[2]);
  CHECK(lines[2].folded_tasks == "[2-4,9%2]");
  CHECK(lines[3].job == &other);
  absl::StatusOr<SqueueFormat> format = SqueueFormat::Parse("%i|%K|%t");
  REQUIRE(format.ok());
  CHECK(format->Row(*lines[2].job, 0, lines[2].folded_tasks) ==
        "100_[2-4,9%2]|[2-4,9%2]|PD\n");
  // One pending task is not folded.
  std::vector<const v1::JobRecord*> single = {&records[0], &records[2]};
  CHECK(FoldPendingArrayTasks(single)[1].folded_tasks.empty());
}

}  // namespace squeue_format_test
}  // namespace gantry::cli
