// The published trace formats beyond Philly and Tiresias: Alibaba's
// cluster-trace-gpu-v2020 (pai_task_table) and v2023 (openb pod lists) and
// InternLM's AcmeTrace (Seren, Kalos). The fixtures are written here, row by
// row in each format's published schema (column names and order from the
// repositories' READMEs and .header files; the data are made up, some
// values taken from the READMEs' examples); the real files, whose licences
// do not let them be copied here, are read when present under the shared
// data directory (tests/unit/support/shared_data.h).
#include <catch2/catch.hpp>
#include <string>

#include "daemon/simulator/trace_reader.h"
#include "tests/unit/support/shared_data.h"

namespace gantry::sim {
namespace trace_formats_test {

// cluster-trace-gpu-v2020/data/pai_task_table.header.
constexpr char kPaiTaskHeader[] =
    "job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,"
    "plan_mem,plan_gpu,gpu_type\n";

// pai_task_table rows as the raw CSV has them: no header row.
constexpr char kPaiTaskRows[] =
    // Line 1: half a GPU for 38 s -> one whole GPU (rounded up).
    "4f057009a5d481acec67b088,tensorflow,1.0,Terminated,1739162.0,"
    "1739200.0,600.0,29.296875,50.0,MISC\n"
    // Lines 2-4: one job of three tasks; the parameter servers ask for no
    // GPU (empty plan_gpu), 4 workers one GPU each (a failed task still
    // ran), one evaluator a quarter -> 5 GPUs from 2081340 to 2084000.
    "af724763f4f5d0beef445849,ps,2.0,Terminated,2081336.0,2083889.0,600.0,"
    "29.296875,,\n"
    "af724763f4f5d0beef445849,worker,4.0,Failed,2081340.0,2083900.0,800.0,"
    "58.59375,100.0,V100\n"
    "af724763f4f5d0beef445849,evaluator,1.0,Terminated,2081400.0,"
    "2084000.0,400.0,29.296875,25.0,V100\n"
    // Line 5: still running when the trace ends: no end time.
    "6e4e3bb1e7a1f4ae2c6e1a2b,worker,2.0,Running,2090000.0,,600.0,"
    "29.296875,100.0,T4\n"
    // Line 6: 8 instances of 8 GPUs for an hour: a 64-GPU gang.
    "7d0c6e0b8b5a4c2a9f3e1d0c,worker,8.0,Terminated,2100000.0,2103600.0,"
    "1200.0,100.0,800.0,V100M32\n"
    // Line 7: inst_num is not a number.
    "8e1d7f1c9c6b5d3b0a4f2e1d,worker,x,Terminated,2100000.0,2103600.0,"
    "600.0,29.296875,100.0,T4\n";

void CheckPaiJobs(const Trace& trace) {
  CHECK(trace.format == TraceFormat::kAlibaba2020);
  REQUIRE(trace.jobs.size() == 3);
  CHECK(trace.jobs[0].gpus == 1);
  CHECK(trace.jobs[0].submit_ms == 1'739'162'000);
  CHECK(trace.jobs[0].duration_ms == 38'000);
  CHECK(trace.jobs[1].id == JobId(2));
  CHECK(trace.jobs[1].gpus == 5);
  CHECK(trace.jobs[1].submit_ms == 2'081'340'000);
  CHECK(trace.jobs[1].duration_ms == 2'660'000);
  CHECK(trace.jobs[2].gpus == 64);
  CHECK(trace.jobs[2].duration_ms == 3'600'000);
  CHECK(trace.cpu_only_rows == 1);
  CHECK(trace.not_run_rows == 1);
  CHECK(trace.fractional_gpu_rows == 2);
  CHECK(trace.skipped_rows == 1);
}

TEST_CASE("A headerless pai_task_table reads with --format alibaba2020") {
  absl::StatusOr<Trace> trace =
      ParseTrace(kPaiTaskRows, TraceFormat::kAlibaba2020, "pai_task_table");
  REQUIRE(trace.ok());
  CheckPaiJobs(*trace);
  CHECK(trace->jobs[0].line == 1);
  CHECK(trace->jobs[1].line == 3);
  CHECK(trace->first_skip == "line 7: bad inst_num \"x\"");
  CHECK(trace->jobs[0].user.empty());
}

TEST_CASE("A pai_task_table with its published header is detected") {
  absl::StatusOr<Trace> trace =
      ParseTrace(std::string(kPaiTaskHeader) + kPaiTaskRows, TraceFormat::kAuto,
                 "pai_task_table");
  REQUIRE(trace.ok());
  CheckPaiJobs(*trace);
  CHECK(trace->jobs[0].line == 2);
}

TEST_CASE("Without a header or --format a pai_task_table is refused") {
  absl::StatusOr<Trace> trace =
      ParseTrace(kPaiTaskRows, TraceFormat::kAuto, "pai_task_table.csv");
  REQUIRE(trace.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(
      std::string(trace.status().message()).find("give --format alibaba2020") !=
      std::string::npos);
}

TEST_CASE("A user column joined onto the task table is the fair-share user") {
  absl::StatusOr<Trace> trace = ParseTrace(
      "job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,"
      "plan_mem,plan_gpu,gpu_type,user\n"
      "4f057009a5d481acec67b088,tensorflow,1.0,Terminated,1739162.0,"
      "1739200.0,600.0,29.296875,100.0,MISC,58540f191766\n",
      TraceFormat::kAuto, "joined.csv");
  REQUIRE(trace.ok());
  REQUIRE(trace->jobs.size() == 1);
  CHECK(trace->jobs[0].user == "58540f191766");
  CHECK(trace->fractional_gpu_rows == 0);
}

TEST_CASE("A pai_job_table is refused: it has no GPU counts") {
  absl::StatusOr<Trace> trace = ParseTrace(
      "job_name,inst_id,user,status,start_time,end_time\n"
      "4b3f04b66a525d2df903eb16,8cb3bec23d14dbde320b6613452e768cbbf35b8bd64e"
      "e28fcceb77d3c47d,58540f191766,Terminated,4550879.0,4551416.0\n",
      TraceFormat::kAuto, "pai_job_table.csv");
  REQUIRE(trace.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(trace.status().message()).find("no GPU counts") !=
        std::string::npos);
}

TEST_CASE("openb pod lists: creation is submit, GPU shares get a whole GPU") {
  // cluster-trace-gpu-v2023/csv/openb_pod_list_*.csv: header as published;
  // the first three rows are the README's examples.
  absl::StatusOr<Trace> trace = ParseTrace(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
      "creation_time,deletion_time,scheduled_time\n"
      "openb-pod-0017,88000,327680,8,1000,,Burstable,Succeeded,9437497,"
      "10769854,9437497\n"
      "openb-pod-0022,4000,15258,1,220,,BE,Running,9679175,9973826,9679175\n"
      "openb-pod-0035,16000,32768,1,1000,V100M16|V100M32,LS,Running,9967058,"
      "9968575,9967063\n"
      // CPU-only.
      "openb-pod-0005,20000,65536,0,0,,LS,Running,2759674,12902960,2759676\n"
      // Pending: never scheduled.
      "openb-pod-0100,8000,30720,2,1000,,LS,Pending,10001403,10001500,\n"
      // Line 7: deleted before it was scheduled.
      "openb-pod-0101,8000,30720,1,500,,LS,Failed,10001600,10001550,"
      "10001700\n",
      TraceFormat::kAuto, "openb_pod_list_default.csv");
  REQUIRE(trace.ok());
  CHECK(trace->format == TraceFormat::kAlibaba2023);
  REQUIRE(trace->jobs.size() == 3);
  CHECK(trace->jobs[0].gpus == 8);
  CHECK(trace->jobs[0].submit_ms == 9'437'497'000);
  CHECK(trace->jobs[0].duration_ms == 1'332'357'000);
  CHECK(trace->jobs[1].gpus == 1);
  CHECK(trace->jobs[2].submit_ms == 9'967'058'000);
  CHECK(trace->jobs[2].duration_ms == 1'512'000);  // deletion - scheduled
  CHECK(trace->jobs[2].user.empty());
  CHECK(trace->fractional_gpu_rows == 1);
  CHECK(trace->cpu_only_rows == 1);
  CHECK(trace->not_run_rows == 1);
  CHECK(trace->skipped_rows == 1);
  CHECK(trace->first_skip.rfind("line 7: ends (10001550) before", 0) == 0);
}

TEST_CASE("openb pod lists without times are refused: nothing to replay") {
  // openb_pod_list_multigpu*.csv: the pods' resources only.
  absl::StatusOr<Trace> trace = ParseTrace(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
      "openb-pod-0000,12000,16384,1,1000\n",
      TraceFormat::kAuto, "openb_pod_list_multigpu50.csv");
  REQUIRE(trace.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(
      std::string(trace.status().message()).find("no arrivals or run times") !=
      std::string::npos);
}

TEST_CASE("Acme Seren rows: offset times, run time from start to end") {
  // InternLM/AcmeTrace data/job_trace/trace_seren.csv: header as published;
  // the first two rows are the README's examples.
  absl::StatusOr<Trace> trace = ParseTrace(
      "job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,"
      "start_time,end_time,duration,queue,gpu_time\n"
      "5778432,u5907,1,8,128,Other,FAILED,2023-03-01 00:18:22+08:00,"
      "2023-03-01 00:18:54+08:00,2023-03-01 00:20:51+08:00,117,32,936.0\n"
      "5778469,u5907,1,8,128,Other,COMPLETED,2023-03-01 00:23:58+08:00,"
      "2023-03-01 00:24:11+08:00,2023-03-01 01:09:04+08:00,2693,13,21544.0\n"
      // A CPU job.
      "5778470,u1a2b,1,0,16,Other,COMPLETED,2023-03-01 00:25:00+08:00,"
      "2023-03-01 00:25:01+08:00,2023-03-01 00:26:01+08:00,60,1,0.0\n"
      // Cancelled while queued: never started.
      "5778471,u1a2b,16,128,2048,Pretrain,CANCELLED,2023-03-01 00:30:00+08:00"
      ",,2023-03-01 00:40:00+08:00,,,\n"
      // Line 6: a submit time without a date.
      "5778472,u1a2b,1,8,128,SFT,COMPLETED,00:30:00+08:00,"
      "2023-03-01 00:31:00+08:00,2023-03-01 00:40:00+08:00,540,60,4320.0\n",
      TraceFormat::kAuto, "trace_seren.csv");
  REQUIRE(trace.ok());
  CHECK(trace->format == TraceFormat::kAcme);
  REQUIRE(trace->jobs.size() == 2);
  // 2023-03-01 00:18:22 at UTC+8 is 2023-02-28 16:18:22 UTC.
  CHECK(trace->jobs[0].submit_ms == 1'677'601'102'000);
  CHECK(trace->jobs[0].duration_ms == 117'000);
  CHECK(trace->jobs[0].gpus == 8);
  CHECK(trace->jobs[0].user == "u5907");
  CHECK(trace->jobs[1].duration_ms == 2'693'000);
  CHECK(trace->cpu_only_rows == 1);
  CHECK(trace->not_run_rows == 1);
  CHECK(trace->skipped_rows == 1);
  CHECK(trace->first_skip == "line 6: bad submit time \"00:30:00+08:00\"");
}

TEST_CASE("Acme Kalos rows: the run time is end - start, not its duration") {
  // trace_kalos.csv: header and rows as the README publishes them. Kalos'
  // duration cell is end - submit (18 and 82 s), the run 8 and 70 s.
  absl::StatusOr<Trace> trace = ParseTrace(
      "job_id,user,node_num,gpu_num,cpu_num,mem_per_pod_GB,"
      "shared_mem_per_pod,type,state,submit_time,start_time,end_time,"
      "fail_time,stop_time,duration,queue,gpu_time\n"
      "dlctk696s0jbvitv,uf794,8,64,960,1000,100.0,Other,FAILED,2023-05-17 "
      "11:00:58+00:00,2023-05-17 11:01:08+00:00,2023-05-17 11:01:16+00:00,"
      "2023-05-17 11:01:16+00:00,,18,10.0,1152.0\n"
      "dlc1t2ypl09b8qtp,uf794,8,64,960,1000,100.0,Other,CANCELLED,2023-05-17 "
      "11:28:42+00:00,2023-05-17 11:28:54+00:00,2023-05-17 11:30:04+00:00,,"
      "2023-05-17 11:30:04+00:00,82,12.0,5248.0\n",
      TraceFormat::kAuto, "trace_kalos.csv");
  REQUIRE(trace.ok());
  CHECK(trace->format == TraceFormat::kAcme);
  REQUIRE(trace->jobs.size() == 2);
  CHECK(trace->jobs[0].submit_ms == 1'684'321'258'000);
  CHECK(trace->jobs[0].duration_ms == 8'000);
  CHECK(trace->jobs[0].gpus == 64);
  CHECK(trace->jobs[1].duration_ms == 70'000);
  CHECK(trace->skipped_rows == 0);
}

TEST_CASE("The new format names parse and print back") {
  for (const char* name : {"alibaba2020", "alibaba2023", "acme"}) {
    absl::StatusOr<TraceFormat> format = ParseTraceFormat(name);
    REQUIRE(format.ok());
    CHECK(TraceFormatName(*format) == name);
  }
  absl::StatusOr<TraceFormat> unknown = ParseTraceFormat("pai");
  REQUIRE(!unknown.ok());
  CHECK(std::string(unknown.status().message()).find("alibaba2023") !=
        std::string::npos);
  // A header of one format asked for as another.
  CHECK(!ParseTrace("name,num_gpu,gpu_milli,creation_time,deletion_time,"
                    "scheduled_time\np,1,1000,0,5,0\n",
                    TraceFormat::kAcme, "x")
             .ok());
}

// The real files, where someone has put them under the shared data
// directory (licences: v2020 CC-BY-4.0, v2023 none stated, Acme CC-BY-4.0;
// none is copied into this repository).

TEST_CASE("The real openb_pod_list_default.csv reads without a malformed row") {
  const std::string path =
      testing::SharedDataPath("traces/alibaba2023/openb_pod_list_default.csv");
  GANTRY_REQUIRE_SHARED_DATA(path);
  absl::StatusOr<Trace> trace = ReadTraceFile(path, TraceFormat::kAuto);
  REQUIRE(trace.ok());
  CHECK(trace->format == TraceFormat::kAlibaba2023);
  // 8,152 pods: 1,088 ask no GPU, 861 GPU pods were never scheduled.
  CHECK(trace->jobs.size() == 6203);
  CHECK(trace->cpu_only_rows == 1088);
  CHECK(trace->not_run_rows == 861);
  CHECK(trace->fractional_gpu_rows == 2573);
  CHECK(trace->skipped_rows == 0);
}

TEST_CASE("The real pai_task_table.csv reads (headerless)") {
  const std::string path =
      testing::SharedDataPath("traces/alibaba2020/pai_task_table.csv");
  GANTRY_REQUIRE_SHARED_DATA(path);
  absl::StatusOr<Trace> trace = ReadTraceFile(path, TraceFormat::kAlibaba2020);
  REQUIRE(trace.ok());
  CHECK(!trace->jobs.empty());
  CHECK(trace->skipped_rows == 0);
}

TEST_CASE("The real Acme traces read without a malformed row") {
  for (const char* name : {"trace_seren.csv", "trace_kalos.csv"}) {
    const std::string path =
        testing::SharedDataPath(std::string("traces/acme/") + name);
    GANTRY_REQUIRE_SHARED_DATA(path);
    absl::StatusOr<Trace> trace = ReadTraceFile(path, TraceFormat::kAuto);
    REQUIRE(trace.ok());
    CHECK(trace->format == TraceFormat::kAcme);
    CHECK(!trace->jobs.empty());
    CHECK(trace->skipped_rows == 0);
  }
}

}  // namespace trace_formats_test
}  // namespace gantry::sim
