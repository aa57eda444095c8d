// scontrol's records (show job, show partition), its update assignments
// and its command line as gantry subcommands.
#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "cli/slurm/scontrol_alias.h"
#include "cli/slurm/scontrol_records.h"
#include "cli/slurm/scontrol_update.h"

namespace gantry::cli {
namespace scontrol_test {

using Words = std::vector<std::string>;

v1::JobRecord RunningJob() {
  v1::JobRecord job;
  job.set_id(42);
  job.set_user("alice");
  job.set_uid(1000);
  job.set_gid(1000);
  job.set_state(v1::RUNNING);
  job.set_attempt(1);
  job.set_submit_time_ms(1'000'000);
  job.set_start_time_ms(1'000'000);
  job.set_output_path("/home/alice/slurm-42.out");
  v1::JobSpec& spec = *job.mutable_spec();
  spec.set_name("train");
  spec.set_partition("gpu");
  spec.set_nodes(1);
  spec.set_time_limit_seconds(7200);
  spec.set_working_dir("/home/alice");
  spec.set_script_path("/home/alice/train.sh");
  v1::NodeAllocation& share = *job.add_allocation();
  share.set_node("n1");
  share.set_cpus(4);
  share.add_gpu_indices(0);
  return job;
}

TEST_CASE("scontrol show job's layout", "[scontrol]") {
  const std::string record = ScontrolJobRecord(RunningJob(), 1'065'000, 0);
  CHECK(record.rfind("JobId=42 JobName=train\n   UserId=alice(1000) GroupId=",
                     0) == 0);
  for (const char* line :
       {"\n   Priority=0 Nice=0 Account=(null) QOS=normal\n",
        "\n   JobState=RUNNING Reason=None Dependency=(null)\n",
        "\n   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0\n",
        "\n   RunTime=00:01:05 TimeLimit=02:00:00 TimeMin=N/A\n",
        "\n   NodeList=n1\n   BatchHost=n1\n",
        "\n   NumNodes=1 NumCPUs=4 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:*\n",
        "\n   Command=/home/alice/train.sh\n   WorkDir=/home/alice\n",
        "\n   StdErr=/home/alice/slurm-42.out\n   StdIn=/dev/null\n"
        "   StdOut=/home/alice/slurm-42.out\n"}) {
    INFO(line);
    CHECK(absl::StrContains(record, line));
  }
  // snakemake's pattern.
  CHECK(absl::StrContains(record, " JobState=RUNNING "));
  CHECK_FALSE(absl::StrContains(record, "CPU_Count"));
  CHECK(
      absl::StrContains(ScontrolJobRecord(RunningJob(), 1'065'000, 2),
                        "     Nodes=n1 CPU_Count=4 Mem=0 GRES=gpu:1(IDX:0)\n"));
  v1::JobRecord norequeue = RunningJob();
  norequeue.mutable_spec()->set_max_restarts(0);
  CHECK(absl::StrContains(ScontrolJobRecord(norequeue, 0, 0), "Requeue=0 "));
  const std::string one = OneLine(ScontrolJobRecord(RunningJob(), 0, 0));
  CHECK(one.find('\n') == one.size() - 1);
  CHECK(absl::StrContains(one, "JobName=train UserId=alice(1000)"));
}

TEST_CASE("scontrol's durations", "[scontrol]") {
  CHECK(ScontrolDuration(5) == "00:00:05");
  CHECK(ScontrolDuration(3 * 86400 + 3661) == "3-01:01:01");
  CHECK(ScontrolDuration(-4) == "00:00:00");
}

TEST_CASE("scontrol show partition's layout", "[scontrol]") {
  v1::PartitionInfo gpu;
  gpu.set_name("gpu");
  gpu.set_is_default(true);
  gpu.set_max_time_seconds(86400);
  v1::NodeRecord n1, n2;
  n1.set_name("n1");
  n1.add_partitions("gpu");
  n1.mutable_inventory()->set_cpus(8);
  n2.set_name("n2");
  n2.add_partitions("gpu");
  n2.mutable_inventory()->set_cpus(8);
  const std::string record = ScontrolPartitionRecord(gpu, {n1, n2});
  CHECK(record.rfind("PartitionName=gpu\n", 0) == 0);
  CHECK(absl::StrContains(record, " Default=YES "));
  CHECK(absl::StrContains(record, "MaxTime=1-00:00:00 "));
  CHECK(absl::StrContains(record, "\n   Nodes=n[1-2]\n"));
  CHECK(absl::StrContains(record, "State=UP TotalCPUs=16 TotalNodes=2 "));
}

TEST_CASE("scontrol show node's layout and state words", "[scontrol]") {
  v1::NodeRecord node;
  node.set_name("n1");
  node.set_address("10.0.0.1");
  node.set_state(v1::NODE_UP);
  node.add_partitions("gpu");
  node.mutable_inventory()->set_cpus(8);
  node.mutable_inventory()->set_cores(8);
  node.mutable_inventory()->set_packages(2);
  node.mutable_inventory()->set_memory_mb(16000);
  node.mutable_inventory()->add_gpus();
  node.set_cpus_allocated(2);
  std::string record = ScontrolNodeRecord(node);
  CHECK(record.rfind("NodeName=n1 CoresPerSocket=4\n   CPUAlloc=2 ", 0) == 0);
  CHECK(absl::StrContains(record, "\n   State=MIXED ThreadsPerCore=1 "));
  CHECK(absl::StrContains(record, "\n   Gres=gpu:1\n"));
  CHECK(absl::StrContains(record, "\n   NodeAddr=10.0.0.1 NodeHostName=n1 "));
  CHECK(absl::StrContains(record,
                          "\n   CfgTRES=cpu=8,mem=16000M,billing=8,"
                          "gres/gpu=1\n"));
  CHECK_FALSE(absl::StrContains(record, "Reason="));
  node.set_drained(true);
  node.set_drain_reason("bad fan");
  node.set_drain_user("root");
  record = ScontrolNodeRecord(node);
  CHECK(absl::StrContains(record, "\n   State=MIXED+DRAIN "));
  CHECK(absl::StrContains(record, "\n   Reason=bad fan [root@"));
  node.set_cpus_allocated(0);
  CHECK(absl::StrContains(ScontrolNodeRecord(node), " State=IDLE+DRAIN "));
  node.set_state(v1::NODE_DOWN);
  CHECK(absl::StrContains(ScontrolNodeRecord(node), " State=DOWN+DRAIN* "));
  node.set_drained(false);
  node.set_state(v1::NODE_UNREACHABLE);
  CHECK(absl::StrContains(ScontrolNodeRecord(node), " State=IDLE* "));
}

TEST_CASE("scontrol update of jobs and nodes", "[scontrol_update]") {
  absl::StatusOr<ScontrolUpdate> job =
      ParseScontrolUpdate({"jobid=7,8", "TimeLimit=1:00:00", "Partition=p2"});
  REQUIRE(job.ok());
  CHECK(job->entity == ScontrolUpdate::Entity::kJob);
  CHECK(job->job_ids == Words{"7", "8"});
  CHECK(*job->time_limit_seconds == 3600);
  CHECK(job->time_limit_delta == 0);
  CHECK(*job->partition == "p2");
  absl::StatusOr<ScontrolUpdate> relative =
      ParseScontrolUpdate({"JobId=7", "TimeLimit=-30"});
  REQUIRE(relative.ok());
  CHECK(relative->time_limit_delta == -1);
  CHECK(*relative->time_limit_seconds == 30 * 60);
  CHECK(*ParseScontrolUpdate({"JobId=7", "TimeLimit=UNLIMITED"})
             ->time_limit_seconds == 0);
  absl::StatusOr<ScontrolUpdate> node =
      ParseScontrolUpdate({"NodeName=n[1-2]", "State=DRAIN", "Reason=bad fan"});
  REQUIRE(node.ok());
  CHECK(node->entity == ScontrolUpdate::Entity::kNode);
  CHECK(node->nodes == Words{"n1", "n2"});
  CHECK(node->drain);
  CHECK(node->reason == "bad fan");
  absl::StatusOr<ScontrolUpdate> down =
      ParseScontrolUpdate({"NodeName=n1", "State=down", "Reason=x"});
  REQUIRE(down.ok());
  CHECK(down->drain);
  CHECK(down->notes.size() == 1);
  CHECK_FALSE(ParseScontrolUpdate({"NodeName=n1", "State=RESUME"})->drain);
  for (const Words& bad :
       {Words{}, Words{"JobId=7"}, Words{"JobId=7", "Nice=5"},
        Words{"NodeName=n1", "State=DRAIN"}, Words{"JobId=7", "NodeName=n1"},
        Words{"JobId=7", "TimeLimit=soon"}, Words{"NodeName=n1", "State=on"},
        Words{"JobId=7", "TimeLimit=+UNLIMITED"}, Words{"TimeLimit=5"},
        Words{"JobId=7", "State=DRAIN"}, Words{"NodeName=n[1-", "State=IDLE"},
        Words{"=5"}, Words{"JobId"}}) {
    INFO((bad.empty() ? std::string("(empty)") : bad[0]));
    CHECK(!ParseScontrolUpdate(bad).ok());
  }
  absl::StatusOr<ScontrolUpdate> unknown =
      ParseScontrolUpdate({"JobId=7", "Nice=5"});
  CHECK(absl::StrContains(unknown.status().message(), "\"Nice\""));
}

TEST_CASE("scontrol update Gres= replaces a job's GPUs per node and type",
          "[scontrol_update]") {
  struct Row {
    const char* word;
    uint32_t gpus;
    const char* type;
  };
  for (const Row& row :
       {Row{"Gres=gpu:a100:2", 2, "a100"}, Row{"gres=gpu:4", 4, ""},
        Row{"Gres=gpu:h100", 1, "h100"}, Row{"Gres=gpu", 1, ""},
        Row{"TresPerNode=gres/gpu:v100:3", 3, "v100"},
        Row{"TresPerNode=gres:gpu:2", 2, ""}, Row{"Gres=", 0, ""},
        Row{"Gres=(null)", 0, ""}}) {
    INFO(row.word);
    absl::StatusOr<ScontrolUpdate> update =
        ParseScontrolUpdate({"JobId=7", row.word});
    INFO(update.status().ToString());
    REQUIRE(update.ok());
    REQUIRE(update->gpus_per_node.has_value());
    CHECK(*update->gpus_per_node == row.gpus);
    CHECK(update->gpu_type == row.type);
  }
  for (const char* bad : {"Gres=mps:100", "Gres=gpu:a100:2:x", "Gres=gpu:a/b:1",
                          "Gres=gpu:a100:-1"}) {
    INFO(bad);
    const absl::StatusOr<ScontrolUpdate> update =
        ParseScontrolUpdate({"JobId=7", bad});
    CHECK(update.status().code() == absl::StatusCode::kInvalidArgument);
  }
  CHECK_FALSE(ParseScontrolUpdate({"NodeName=n1", "Gres=gpu:1"}).ok());
  CHECK(ParseScontrolUpdate({"JobId=7"}).status().message().find("Gres") !=
        std::string::npos);
}

Words Expand(const Words& argv, Words* notes = nullptr) {
  Words ignored;
  absl::StatusOr<Words> words = ExpandScontrol(argv, notes ? *notes : ignored);
  REQUIRE(words.ok());
  return *words;
}

TEST_CASE("scontrol's commands as gantry subcommands", "[scontrol_alias]") {
  CHECK(Expand({"scontrol", "show", "jobid", "-dd", "12"}) ==
        Words{"gantry", "job", "--slurm-only", "--details", "--details", "12"});
  CHECK(Expand({"scontrol", "-o", "show", "job"}) ==
        Words{"gantry", "job", "--slurm-only", "--oneliner"});
  CHECK(Expand({"scontrol", "show", "partition", "gpu"}) ==
        Words{"gantry", "partitions", "gpu"});
  CHECK(Expand({"scontrol", "show", "PartitionName=gpu"}) ==
        Words{"gantry", "partitions", "gpu"});
  CHECK(Expand({"scontrol", "show", "hostlist", "n1,n2"}) ==
        Words{"gantry", "hostlist", "n1,n2"});
  CHECK(Expand({"scontrol", "show", "config"}) == Words{"gantry", "config"});
  CHECK(Expand({"scontrol", "ping"}) == Words{"gantry", "ping"});
  CHECK(Expand({"scontrol", "version"}) ==
        Words{"gantry", "version", "--slurm"});
  CHECK(Expand({"scontrol", "-V"}) == Words{"gantry", "version", "--slurm"});
  CHECK(Expand({"scontrol", "requeuehold", "jobid=5"}) ==
        Words{"gantry", "requeue", "--hold", "5"});
  CHECK(Expand({"scontrol", "update", "JobId=5", "TimeLimit=10"}) ==
        Words{"gantry", "update", "JobId=5", "TimeLimit=10"});
  Words notes;
  CHECK(Expand({"scontrol", "-M", "c1", "ping"}, &notes) ==
        Words{"gantry", "ping"});
  CHECK(notes.size() == 1);
  Words ignored;
  absl::StatusOr<Words> unknown =
      ExpandScontrol({"scontrol", "reboot", "n1"}, ignored);
  REQUIRE(!unknown.ok());
  CHECK(absl::StrContains(unknown.status().message(), "ping and version"));
  absl::StatusOr<Words> typo =
      ExpandScontrol({"scontrol", "--detials"}, ignored);
  REQUIRE(!typo.ok());
  CHECK(absl::StrContains(typo.status().message(), "'--details'"));
  CHECK(!ExpandScontrol({"scontrol", "show", "hostlist", "a", "b"}, ignored)
             .ok());
  CHECK(!ExpandScontrol({"scontrol", "requeue"}, ignored).ok());
  CHECK(!ExpandScontrol({"scontrol", "--json", "show", "job"}, ignored).ok());
}

TEST_CASE("scontrol takeover is gantry handover, with its INDEX",
          "[slurm_alias]") {
  CHECK(Expand({"scontrol", "takeover"}) == Words{"gantry", "handover"});
  CHECK(Expand({"scontrol", "takeover", "2"}) ==
        Words{"gantry", "handover", "2"});
  CHECK(Expand({"scontrol", "TAKEOVER", "ctl2"}) ==
        Words{"gantry", "handover", "ctl2"});
  Words ignored;
  CHECK(!ExpandScontrol({"scontrol", "takeover", "1", "2"}, ignored).ok());
}

}  // namespace scontrol_test
}  // namespace gantry::cli
