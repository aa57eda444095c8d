// sacct's lines: fields, rows of a job, and print_fields' layouts.
#include "cli/slurm/sacct_format.h"

#include <cstdlib>
#include <ctime>

#include <catch2/catch.hpp>

#include "cli/slurm/sacct_fields.h"

namespace gantry::cli {
namespace sacct_format_test {

void UseUtc() {
  setenv("TZ", "UTC", 1);
  tzset();
}

// 2024-03-01T10:00:00Z
constexpr int64_t kSubmitMs = 1709287200000;

v1::JobRecord FinishedJob() {
  v1::JobRecord job;
  job.set_id(42);
  job.set_user("alice");
  job.set_uid(1000);
  job.set_gid(1000);
  job.set_state(v1::COMPLETED);
  job.set_submit_time_ms(kSubmitMs);
  job.set_start_time_ms(kSubmitMs + 5000);
  job.set_end_time_ms(kSubmitMs + 5000 + 90061000);  // 1 day 1:01:01 later
  job.set_attempt(1);
  v1::JobSpec& spec = *job.mutable_spec();
  spec.set_name("train");
  spec.set_partition("gpu");
  spec.set_nodes(2);
  spec.set_ntasks_per_node(2);
  spec.set_cpus_per_task(2);
  spec.set_gpus_per_node(4);
  spec.set_mem_per_node_mb(16384);
  spec.set_script_once(true);
  spec.set_working_dir("/home/alice");
  for (const char* node : {"node01", "node02"}) {
    v1::NodeAllocation& a = *job.add_allocation();
    a.set_node(node);
    a.set_cpus(4);
    a.set_mem_mb(16384);
    for (uint32_t g = 0; g < 4; ++g) a.add_gpu_indices(g);
  }
  v1::StepRecord& step = *job.add_steps();
  step.set_id(1);
  step.add_argv("/usr/bin/hostname");
  step.set_start_time_ms(kSubmitMs + 6000);
  step.set_end_time_ms(kSubmitMs + 9000);
  v1::NodeAllocation& n = *step.add_nodes();
  n.set_node("node01");
  n.set_cpus(2);
  n.set_rank_count(2);
  v1::RankExit& exit = *step.add_exits();
  exit.set_exit_code(3);
  step.set_exit_code(3);
  return job;
}

std::string Render(const SacctFormat& format, const v1::JobRecord& job,
                   SacctParsable parsable, bool allocations = false) {
  SacctContext context;
  context.now_ms = kSubmitMs + 100000000;
  context.cluster = "c1";
  std::string out = format.Header(parsable, "|");
  for (const SacctRow& row : SacctRowsOf(job, allocations)) {
    out += format.Row(row, context, parsable, "|");
  }
  return out;
}

TEST_CASE("sacct's default layout is Slurm's, byte for byte") {
  UseUtc();
  absl::StatusOr<SacctFormat> format = SacctFormat::Parse(kSacctDefaultFormat);
  REQUIRE(format.ok());
  const std::string out = Render(*format, FinishedJob(), SacctParsable::kNo);
  CHECK(out ==
        "JobID           JobName  Partition    Account  AllocCPUS      State "
        "ExitCode \n"
        "------------ ---------- ---------- ---------- ---------- ---------- "
        "-------- \n"
        "42                train        gpu                     8  COMPLETED "
        "     0:0 \n"
        "42.batch          batch                                4  COMPLETED "
        "     0:0 \n"
        "42.0           hostname                                2     FAILED "
        "     3:0 \n");
}

TEST_CASE("sacct -P and -p: delimited fields, with and without a last one") {
  UseUtc();
  absl::StatusOr<SacctFormat> format = SacctFormat::Parse("JobIdRaw,State");
  REQUIRE(format.ok());
  CHECK(Render(*format, FinishedJob(), SacctParsable::kNoEnding, true) ==
        "JobIDRaw|State\n42|COMPLETED\n");
  CHECK(Render(*format, FinishedJob(), SacctParsable::kTrailing, true) ==
        "JobIDRaw|State|\n42|COMPLETED|\n");
  SacctContext context;
  v1::JobRecord job = FinishedJob();
  CHECK(format->Row(SacctRowsOf(job, true)[0], context,
                    SacctParsable::kNoEnding, ";") == "42;COMPLETED\n");
}

TEST_CASE("sacct widths: %N right-aligns, %-N left-aligns, longer is cut") {
  absl::StatusOr<SacctFormat> format =
      SacctFormat::Parse("jobname%4,JOBID%-6,state%12");
  REQUIRE(format.ok());
  v1::JobRecord job = FinishedJob();
  job.mutable_spec()->set_name("pretraining");
  SacctContext context;
  CHECK(format->Row(SacctRowsOf(job, true)[0], context, SacctParsable::kNo,
                    "|") == "pre+ 42        COMPLETED \n");
  CHECK(format->Header(SacctParsable::kNo, "|") ==
        "JobN JobID         State \n---- ------ ------------ \n");
}

TEST_CASE("sacct formats: unknown fields and bad widths are refused") {
  absl::StatusOr<SacctFormat> unknown = SacctFormat::Parse("JobID,Stat");
  REQUIRE(!unknown.ok());
  CHECK(std::string(unknown.status().message()) ==
        "invalid field \"Stat\" (did you mean Start or State?); sacct -e "
        "lists the fields");
  absl::StatusOr<SacctFormat> typo = SacctFormat::Parse("JobNmae");
  REQUIRE(!typo.ok());
  CHECK(std::string(typo.status().message()).find("(did you mean JobName?)") !=
        std::string::npos);
  CHECK(!SacctFormat::Parse("JobID%x").ok());
  CHECK(!SacctFormat::Parse("JobID%0").ok());
  CHECK(!SacctFormat::Parse("").ok());
  // -l lists fields Gantry cannot fill: left out.
  absl::StatusOr<SacctFormat> long_format =
      SacctFormat::Parse(kSacctLongFormat, /*skip_unknown=*/true);
  REQUIRE(long_format.ok());
  CHECK(long_format->Names().front() == "JobID");
}

TEST_CASE("sacct fields in Slurm's spelling") {
  UseUtc();
  v1::JobRecord job = FinishedJob();
  SacctContext context;
  context.now_ms = kSubmitMs;
  auto value = [&](const char* name, size_t row = 0) {
    const SacctField* field = FindSacctField(name);
    REQUIRE(field != nullptr);
    return field->value(SacctRowsOf(job, false)[row], context);
  };
  CHECK(value("Elapsed") == "1-01:01:01");
  CHECK(value("ElapsedRaw") == "90061");
  CHECK(value("Submit") == "2024-03-01T10:00:00");
  CHECK(value("Start") == "2024-03-01T10:00:05");
  CHECK(value("NodeList") == "node[01-02]");
  CHECK(value("NodeList", 1) == "node01");
  CHECK(value("NNodes") == "2");
  CHECK(value("AllocTRES") == "billing=8,cpu=8,gres/gpu=8,mem=32G,node=2");
  CHECK(value("ReqTRES") == "billing=8,cpu=8,gres/gpu=8,mem=32G,node=2");
  CHECK(value("ReqMem") == "16G");
  CHECK(value("Timelimit") == "UNLIMITED");
  CHECK(value("JobName", 2) == "hostname");
  CHECK(value("ExitCode", 2) == "3:0");
  CHECK(value("DerivedExitCode") == "3:0");
  CHECK(value("CPUTimeRAW") == "720488");
  CHECK(value("Restarts") == "0");
  job.set_state(v1::CANCELLED);
  job.set_cancelled_by_uid(0);
  CHECK(value("State") == "CANCELLED by 0");
  CHECK(value("State", 1) == "CANCELLED");
  job.set_state(v1::RUNNING);
  job.set_end_time_ms(0);
  CHECK(value("End") == "Unknown");
  job.set_state(v1::PENDING);
  job.set_start_time_ms(0);
  job.clear_allocation();
  CHECK(value("Start") == "Unknown");
  CHECK(value("NodeList") == "None assigned");
  CHECK(value("NCPUS") == "8");
  CHECK(value("AllocCPUS") == "0");
  job.mutable_spec()->set_time_limit_seconds(90);
  CHECK(value("Timelimit") == "00:01:30");
  CHECK(value("TimelimitRaw") == "1");
}

TEST_CASE("sacct rows: array tasks, -X and one step") {
  v1::JobRecord job = FinishedJob();
  job.set_array_job_id(40);
  job.set_array_task_id(2);
  const SacctField* id = FindSacctField("jobid");
  const SacctField* raw = FindSacctField("JOBIDRAW");
  SacctContext context;
  std::vector<SacctRow> rows = SacctRowsOf(job, false);
  REQUIRE(rows.size() == 3);
  CHECK(id->value(rows[0], context) == "40_2");
  CHECK(id->value(rows[1], context) == "40_2.batch");
  CHECK(id->value(rows[2], context) == "40_2.0");
  CHECK(raw->value(rows[0], context) == "42");
  CHECK(raw->value(rows[2], context) == "42.0");
  CHECK(SacctRowsOf(job, true).size() == 1);
  REQUIRE(SacctRowsOf(job, false, "0").size() == 1);
  CHECK(SacctRowsOf(job, false, "0")[0].kind == SacctRow::Kind::kStep);
  CHECK(SacctRowsOf(job, false, "batch").size() == 1);
  CHECK(SacctRowsOf(job, false, "7").empty());
  // Not started: no batch line.
  job.set_start_time_ms(0);
  job.clear_steps();
  CHECK(SacctRowsOf(job, false).size() == 1);
}

TEST_CASE("Slurm's value spellings") {
  CHECK(SlurmDuration(0) == "00:00:00");
  CHECK(SlurmDuration(3599) == "00:59:59");
  CHECK(SlurmDuration(86400 * 3 + 7) == "3-00:00:07");
  CHECK(SlurmMemory(500) == "500M");
  CHECK(SlurmMemory(2048) == "2G");
  CHECK(SlurmMemory(2 * 1024 * 1024) == "2T");
  CHECK(SlurmTime(0) == "Unknown");
  CHECK(SacctHelpFormat().find("JobIDRaw") != std::string::npos);
}

}  // namespace sacct_format_test
}  // namespace gantry::cli
