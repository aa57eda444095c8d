// squeue's other layouts: every %-letter, -O field lists, -S sort keys,
// -s step rows and unknown letters left out as Slurm does.
#include <algorithm>

#include <catch2/catch.hpp>

#include "cli/slurm/long_fields.h"
#include "cli/slurm/squeue_fields.h"
#include "cli/slurm/squeue_format.h"
#include "cli/slurm/squeue_sort.h"

namespace gantry::cli {
namespace squeue_layouts_test {

v1::JobRecord Job(uint64_t id, v1::JobState state, const std::string& part,
                  double priority) {
  v1::JobRecord job;
  job.set_id(id);
  job.set_user("alice");
  job.set_uid(1000);
  job.set_gid(1000);
  job.set_state(state);
  job.set_priority(priority);
  job.mutable_spec()->set_name(absl::StrCat("job", id));
  job.mutable_spec()->set_partition(part);
  job.mutable_spec()->set_working_dir("/home/alice/run");
  job.mutable_spec()->set_script_path("/home/alice/run/train.sh");
  job.mutable_spec()->set_nodes(1);
  job.mutable_spec()->set_mem_per_node_mb(2048);
  job.set_submit_time_ms(1'000'000);
  return job;
}

TEST_CASE("squeue letters for work dir, command, account, QOS and more",
          "[squeue_format]") {
  v1::JobRecord job = Job(12, v1::PENDING, "gpu", 4321.7);
  job.set_reason("Priority");
  absl::StatusOr<SqueueFormat> format =
      SqueueFormat::Parse("%Z|%o|%a|%q|%Q|%r|%m|%k|%y|%v|%U|%c|%h|%z|%Y");
  REQUIRE(format.ok());
  CHECK(format->Header() ==
        "WORK_DIR|COMMAND|ACCOUNT|QOS|PRIORITY|REASON|MIN_MEMORY|COMMENT|"
        "NICE|RESERVATION|UID|MIN_CPUS|OVER_SUBSCRIBE|S:C:T|SCHEDNODES\n");
  CHECK(format->Row(job, 0) ==
        "/home/alice/run|/home/alice/run/train.sh|(null)|normal|4321|"
        "Priority|2048M|(null)|0|(null)|1000|1|OK|*:*:*|(null)\n");
  // --wrap and standard input have no script file: (null), as Slurm.
  job.mutable_spec()->clear_script_path();
  CHECK(SqueueValue('o', job, 0) == "(null)");
}

TEST_CASE("a pending job's %S is the backfill reservation's start",
          "[squeue_format]") {
  v1::JobRecord job = Job(3, v1::PENDING, "gpu", 1);
  CHECK(SqueueValue('S', job, 0) == "N/A");
  job.set_expected_start_time_ms(1'700'000'000'000);
  CHECK(SqueueValue('S', job, 0) != "N/A");
  CHECK(SqueueValue('S', job, 0).size() == 19);  // 2023-11-14T22:13:20
}

TEST_CASE("%all is every field, each after a bar", "[squeue_format]") {
  CHECK(PercentFormat::ExpandAll("x%all%%all", "ij") == "x%i|%j|%%all");
  absl::StatusOr<SqueueFormat> format = SqueueFormat::Parse("%all");
  REQUIRE(format.ok());
  const std::string header = format->Header();
  CHECK(header.rfind("JOBID|JOBID|ARRAY_JOB_ID|", 0) == 0);
  CHECK(std::count(header.begin(), header.end(), '|') ==
        static_cast<long>(std::string_view(kSqueueLetters).size()));
}

TEST_CASE("unknown letters are left out and reported", "[squeue_format]") {
  std::vector<char> unknown;
  absl::StatusOr<SqueueFormat> format =
      SqueueFormat::Parse("%i %~ %j", &unknown);
  REQUIRE(format.ok());
  CHECK(unknown == std::vector<char>{'~'});
  CHECK(format->Header() == "JOBID  NAME\n");
}

TEST_CASE("squeue -O fields: names, widths, right alignment and suffixes",
          "[squeue_format]") {
  absl::StatusOr<SqueueFormat> format =
      SqueueFormat::ParseFields("JobID:6,name:.8,StateCompact:3|,WorkDir");
  REQUIRE(format.ok());
  // The default width is 20 and trailing blanks stay, as squeue prints them.
  CHECK(format->Header() == "JOBID     NAMEST |WORK_DIR            \n");
  CHECK(format->Row(Job(7, v1::RUNNING, "gpu", 0), 0) ==
        "7         job7R  |/home/alice/run     \n");
  for (const char* bad :
       {"JobID,,Name", "Nmae", "JobID:.", "JobID:99999", ""}) {
    INFO(bad);
    CHECK(!SqueueFormat::ParseFields(bad).ok());
  }
  absl::StatusOr<SqueueFormat> typo = SqueueFormat::ParseFields("UserNmae");
  REQUIRE(!typo.ok());
  CHECK(typo.status().message().find("did you mean UserName?") !=
        std::string::npos);
  CHECK(SqueueFieldLetter("reasonlist") == 'R');
  CHECK(SqueueFieldLetter("bogus") == 0);
}

TEST_CASE("squeue -S sorts by letters and names, + and -", "[squeue_sort]") {
  const v1::JobRecord a = Job(1, v1::RUNNING, "b", 0);
  const v1::JobRecord b = Job(2, v1::PENDING, "b", 10);
  const v1::JobRecord c = Job(3, v1::PENDING, "b", 50);
  const v1::JobRecord d = Job(4, v1::PENDING, "a", 1);
  std::vector<const v1::JobRecord*> jobs = {&a, &b, &c, &d};
  absl::StatusOr<SqueueSort> sort = SqueueSort::Parse(kSqueueDefaultSort);
  REQUIRE(sort.ok());
  sort->Apply(jobs, 0);
  // Partition a first; in b pending before running, higher priority first.
  CHECK(jobs == std::vector<const v1::JobRecord*>{&d, &c, &b, &a});
  sort = SqueueSort::Parse("-i");
  REQUIRE(sort.ok());
  sort->Apply(jobs, 0);
  CHECK(jobs == std::vector<const v1::JobRecord*>{&d, &c, &b, &a});
  sort = SqueueSort::Parse("+JobID");
  REQUIRE(sort.ok());
  sort->Apply(jobs, 0);
  CHECK(jobs == std::vector<const v1::JobRecord*>{&a, &b, &c, &d});
  // Ids compare as numbers, not text: 10 after 9.
  const v1::JobRecord nine = Job(9, v1::RUNNING, "a", 0);
  const v1::JobRecord ten = Job(10, v1::RUNNING, "a", 0);
  CHECK(SqueueSort::Parse("i")->Compare(nine, ten, 0) < 0);
  for (const char* bad : {"", "P,,t", "~", "-", "bogus"}) {
    INFO(bad);
    CHECK(!SqueueSort::Parse(bad).ok());
  }
}

TEST_CASE("squeue -s shows steps as JOBID.STEPID with their own name and nodes",
          "[squeue_format]") {
  v1::JobRecord job = Job(5, v1::RUNNING, "gpu", 0);
  job.add_allocation()->set_node("n1");
  v1::StepRecord& step = *job.add_steps();
  step.set_id(2);
  step.set_name("python3");
  step.set_start_time_ms(10'000);
  step.add_nodes()->set_node("n1");
  absl::StatusOr<SqueueFormat> format = SqueueFormat::Parse(kSqueueStepsFormat);
  REQUIRE(format.ok());
  CHECK(format->StepHeader() ==
        "         STEPID     NAME PARTITION     USER      TIME NODELIST\n");
  // The record's step 2 is Slurm's step 1 (Slurm counts from 0).
  CHECK(format->StepRow(job, step, 75'000) ==
        "            5.1  python3       gpu    alice      1:05 n1\n");
}

TEST_CASE("long field lists name the closest field", "[long_fields]") {
  CHECK(ClosestName("stat", {"State", "Name"}) == "State");
  CHECK(ClosestName("zzzzzzzz", {"State", "Name"}).empty());
}

TEST_CASE("squeue -S orders as its pairwise comparison does, ties kept",
          "[squeue_sort]") {
  // Apply computes each key once per job; Compare is the definition.
  std::vector<v1::JobRecord> records;
  const v1::JobState states[] = {v1::PENDING, v1::RUNNING, v1::COMPLETED};
  for (uint64_t id = 1; id <= 200; ++id) {
    v1::JobRecord job =
        Job(id, states[(id * 7) % 3], (id * 13) % 4 == 0 ? "a" : "b",
            static_cast<double>((id * 31) % 11));
    job.mutable_spec()->set_name(absl::StrCat("n", (id * 17) % 5));
    records.push_back(std::move(job));
  }
  for (const char* keys : {kSqueueDefaultSort, "j,-i", "-t,P", "p", "-j"}) {
    INFO(keys);
    const absl::StatusOr<SqueueSort> sort = SqueueSort::Parse(keys);
    REQUIRE(sort.ok());
    std::vector<const v1::JobRecord*> applied;
    for (const v1::JobRecord& job : records) applied.push_back(&job);
    std::vector<const v1::JobRecord*> expected = applied;
    std::stable_sort(expected.begin(), expected.end(),
                     [&](const v1::JobRecord* a, const v1::JobRecord* b) {
                       return sort->Compare(*a, *b, 0) < 0;
                     });
    sort->Apply(applied, 0);
    CHECK(applied == expected);
  }
}

}  // namespace squeue_layouts_test
}  // namespace gantry::cli
