// sreport's arithmetic: overlap of runs with a period, by user, in units.
#include "cli/slurm/usage_report.h"

#include <catch2/catch.hpp>

namespace gantry::cli {
namespace usage_report_test {

v1::JobRecord Job(const char* user, uint32_t cpus, uint32_t gpus) {
  v1::JobRecord job;
  job.set_user(user);
  v1::NodeAllocation& a = *job.add_allocation();
  a.set_cpus(cpus);
  for (uint32_t g = 0; g < gpus; ++g) a.add_gpu_indices(g);
  return job;
}

void AddAttempt(v1::JobRecord& job, int64_t start_ms, int64_t end_ms) {
  v1::AttemptRecord& attempt = *job.add_attempts();
  attempt.set_start_time_ms(start_ms);
  attempt.set_end_time_ms(end_ms);
}

TEST_CASE("The overlap of a run with a period") {
  CHECK(OverlapMs(0, 100, 50, 200) == 50);
  CHECK(OverlapMs(60, 80, 50, 200) == 20);
  CHECK(OverlapMs(0, 50, 50, 200) == 0);
  CHECK(OverlapMs(300, 400, 50, 200) == 0);
  CHECK(OverlapMs(0, 1000, 50, 200) == 150);
}

TEST_CASE("A job's usage: each attempt's overlap times CPUs and GPUs") {
  v1::JobRecord job = Job("alice", 8, 2);
  AddAttempt(job, 1'000, 61'000);  // 60 s, 30 of them in the period
  AddAttempt(job, 100'000, 0);     // still running: to now
  const Usage used = JobUsage(job, 31'000, 200'000, 130'000);
  CHECK(used.cpu_seconds == Approx((30 + 30) * 8));
  CHECK(used.gpu_seconds == Approx((30 + 30) * 2));
  // Never started: nothing.
  v1::JobRecord pending = Job("bob", 4, 0);
  CHECK(JobUsage(pending, 0, 1'000'000, 500'000).cpu_seconds == 0);
  // A record from before attempts were kept: its own times.
  v1::JobRecord old = Job("carol", 2, 0);
  old.set_start_time_ms(10'000);
  old.set_end_time_ms(20'000);
  CHECK(JobUsage(old, 0, 15'000, 99'000).cpu_seconds == Approx(10));
}

TEST_CASE("Usage summed by user") {
  constexpr int64_t kT0 = 1'000'000;
  v1::JobRecord a1 = Job("alice", 4, 1);
  AddAttempt(a1, kT0, kT0 + 3'600'000);
  v1::JobRecord a2 = Job("alice", 2, 0);
  AddAttempt(a2, kT0, kT0 + 1'800'000);
  v1::JobRecord b = Job("bob", 1, 4);
  AddAttempt(b, kT0, kT0 + 7'200'000);
  v1::JobRecord never = Job("carol", 8, 8);  // pending: used nothing
  google::protobuf::RepeatedPtrField<v1::JobRecord> jobs;
  for (const v1::JobRecord* job : {&a1, &a2, &b, &never}) *jobs.Add() = *job;
  const UsageByUser sum = SumUsage(jobs, kT0, kT0 + 3'600'000, kT0 + 9'000'000);
  REQUIRE(sum.users.size() == 2);
  CHECK(sum.users.at("alice").cpu_seconds == Approx(4 * 3600 + 2 * 1800));
  CHECK(sum.users.at("alice").gpu_seconds == Approx(3600));
  CHECK(sum.users.at("bob").gpu_seconds == Approx(4 * 3600));
  CHECK(sum.total.cpu_seconds == Approx(4 * 3600 + 2 * 1800 + 3600));
}

TEST_CASE("sreport's units") {
  CHECK(*ParseTimeUnit("Hours") == TimeUnit::kHours);
  CHECK(*ParseTimeUnit("minutes") == TimeUnit::kMinutes);
  CHECK(*ParseTimeUnit("percent") == TimeUnit::kPercent);
  CHECK(!ParseTimeUnit("fortnights").ok());
  CHECK(FormatUsage(7200, TimeUnit::kHours, 0) == "2");
  CHECK(FormatUsage(7200, TimeUnit::kMinutes, 0) == "120");
  CHECK(FormatUsage(89, TimeUnit::kMinutes, 0) == "1");
  CHECK(FormatUsage(7200, TimeUnit::kSeconds, 0) == "7200");
  CHECK(FormatUsage(25, TimeUnit::kPercent, 100) == "25.00%");
  CHECK(FormatUsage(25, TimeUnit::kPercent, 0) == "0.00%");
}

}  // namespace usage_report_test
}  // namespace gantry::cli
