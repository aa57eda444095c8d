// Which jobs a filter selects (listings, scancel -u/-n/-t, array ids), and
// what a listing's summary leaves out.
#include <catch2/catch.hpp>

#include "daemon/controller/core/job_filter.h"

namespace gantry {
namespace job_filter_test {

v1::JobRecord Job(uint64_t id, const std::string& user, v1::JobState state,
                  uint64_t array_id = 0, uint32_t task = 0) {
  v1::JobRecord job;
  job.set_id(id);
  job.set_user(user);
  job.set_state(state);
  job.set_array_job_id(array_id);
  job.set_array_task_id(task);
  job.mutable_spec()->set_name("train");
  job.mutable_spec()->set_partition("gpu");
  return job;
}

v1::JobSelector Selector(uint64_t id) {
  v1::JobSelector selector;
  selector.set_job_id(id);
  return selector;
}

TEST_CASE("an array's id selects all its tasks, ID_TASK one of them") {
  const v1::JobRecord task0 = Job(10, "ada", v1::PENDING, 10, 0);
  const v1::JobRecord task1 = Job(11, "ada", v1::PENDING, 10, 1);
  const v1::JobRecord other = Job(12, "ada", v1::PENDING);
  CHECK(MatchesSelector(Selector(10), task0));
  CHECK(MatchesSelector(Selector(10), task1));
  CHECK_FALSE(MatchesSelector(Selector(10), other));
  v1::JobSelector one = Selector(10);
  one.set_array_task_id(1);
  CHECK_FALSE(MatchesSelector(one, task0));
  CHECK(MatchesSelector(one, task1));
  // Task 0 of array 10 is not "10_0" of job 12.
  one.set_array_task_id(0);
  CHECK_FALSE(MatchesSelector(one, other));
}

TEST_CASE("every non-empty list of a filter narrows it") {
  const v1::JobRecord job = Job(5, "ada", v1::RUNNING);
  v1::JobFilter filter;
  CHECK(MatchesFilter(filter, job));
  CHECK_FALSE(FiltersByAttributes(filter));
  filter.add_users("bob");
  CHECK_FALSE(MatchesFilter(filter, job));
  filter.add_users("ada");
  CHECK(MatchesFilter(filter, job));
  CHECK(FiltersByAttributes(filter));
  filter.add_states(v1::PENDING);
  CHECK_FALSE(MatchesFilter(filter, job));
  filter.add_states(v1::RUNNING);
  CHECK(MatchesFilter(filter, job));
  filter.add_names("eval");
  CHECK_FALSE(MatchesFilter(filter, job));
  filter.add_names("train");
  filter.add_partitions("gpu");
  CHECK(MatchesFilter(filter, job));
  *filter.add_jobs() = Selector(6);
  CHECK_FALSE(MatchesFilter(filter, job));
  *filter.add_jobs() = Selector(5);
  CHECK(MatchesFilter(filter, job));
}

TEST_CASE("an outsized filter is refused naming the limit") {
  v1::JobFilter filter;
  for (int i = 0; i < 10'001; ++i) filter.add_users("u");
  const absl::Status status = CheckFilter(filter);
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(status.message()), Catch::Contains("10000"));
}

TEST_CASE("payloads are cleared: script, arguments, environment, steps") {
  v1::JobRecord job = Job(5, "ada", v1::RUNNING);
  job.mutable_spec()->set_script("#!/bin/sh\n");
  job.mutable_spec()->add_script_args("--token=secret");
  (*job.mutable_spec()->mutable_environment())["TOKEN"] = "secret";
  v1::StepRecord& step = *job.add_steps();
  step.set_id(1);
  step.add_argv("curl");
  step.add_argv("--password=secret");
  step.set_io_token("attach-secret");  // lets its holder read the output
  ClearPayloads(job);
  CHECK(job.spec().script().empty());
  CHECK(job.spec().script_args().empty());
  CHECK(job.spec().environment().empty());
  REQUIRE(job.steps_size() == 1);
  CHECK(job.steps(0).argv().empty());
  CHECK(job.steps(0).io_token().empty());
  CHECK(job.steps(0).id() == 1);  // the rest stays
  CHECK(job.spec().name() == "train");
}

}  // namespace job_filter_test
}  // namespace gantry
