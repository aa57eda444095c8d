// Bounded controller state: listings are summaries in pages, cancel and
// hold resolve their selection in the controller, and finished jobs leave
// memory after min_job_age for the history, where GetJob still finds them
// (with the same owner-only rule for payloads) until their retention ends.
#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include "common/clock.h"
#include "daemon/controller/controller.h"
#include "daemon/store/state_store.h"
#include "tests/unit/support/controller_harness.h"

namespace gantry {
namespace job_retention_test {

constexpr int64_t kMinJobAgeMs = 60'000;
constexpr int64_t kRetentionMs = 3'600'000;

ControllerOptions RetentionOptions() {
  ControllerOptions options;
  options.min_job_age_ms = kMinJobAgeMs;
  options.history_retention_ms = kRetentionMs;
  return options;
}

class Harness : public ControllerHarness {
 public:
  Harness() : ControllerHarness(RetentionOptions()) {}

  uint64_t Submit(const Caller& caller, const std::string& array = "",
                  const std::string& name = "train") {
    v1::SubmitRequest submit;
    v1::JobSpec& spec = *submit.mutable_spec();
    spec.set_name(name);
    spec.set_script("#!/bin/sh\necho secret-script\n");
    spec.add_script_args("--token=secret-arg");
    spec.set_working_dir("/tmp");
    spec.set_array(array);
    std::optional<absl::StatusOr<JobId>> submitted;
    controller_->Submit(submit, caller,
                        [&](absl::StatusOr<JobId> id) { submitted = id; });
    while (!submitted) io_.run_one();
    INFO(submitted->status().ToString());
    REQUIRE(submitted->ok());
    return (*submitted)->value();
  }

  v1::CancelResponse Cancel(const Caller& caller, v1::CancelRequest request) {
    std::optional<v1::CancelResponse> response;
    controller_->Cancel(request, caller,
                        [&](v1::CancelResponse r) { response = std::move(r); });
    while (!response) io_.run_one();
    return *response;
  }

  v1::HoldResponse Hold(const Caller& caller, v1::HoldRequest request) {
    std::optional<v1::HoldResponse> response;
    controller_->Hold(request, caller,
                      [&](v1::HoldResponse r) { response = std::move(r); });
    while (!response) io_.run_one();
    return *response;
  }

  std::vector<v1::JobRecord> List(v1::ListJobsRequest request) {
    std::vector<v1::JobRecord> jobs;
    pages_ = 0;
    do {
      absl::StatusOr<v1::ListJobsResponse> page =
          controller_->ListJobs(request, kRoot);
      REQUIRE(page.ok());
      ++pages_;
      for (const v1::JobRecord& job : page->jobs()) jobs.push_back(job);
      request.set_page_token(page->next_page_token());
    } while (!request.page_token().empty());
    return jobs;
  }

  int pages_ = 0;
};

v1::CancelRequest CancelIds(std::initializer_list<uint64_t> ids) {
  v1::CancelRequest request;
  for (uint64_t id : ids) request.mutable_filter()->add_jobs()->set_job_id(id);
  return request;
}

TEST_CASE("listings are summaries for everyone, in bounded pages",
          "[controller]") {
  Harness h;
  std::vector<uint64_t> submitted;
  for (int i = 0; i < 12; ++i) submitted.push_back(h.Submit(kAlice));
  v1::ListJobsRequest request;
  request.set_page_size(5);
  const std::vector<v1::JobRecord> jobs = h.List(request);
  CHECK(Ids(jobs) == submitted);
  CHECK(h.pages_ == 3);
  for (const v1::JobRecord& job : jobs) {
    CHECK(job.spec().script().empty());
    CHECK(job.spec().script_args().empty());
    CHECK(job.spec().environment().empty());
  }
  // The owner sees them with GetJob; another user does not.
  absl::StatusOr<v1::GetJobResponse> own =
      h.controller_->GetJob(JobId(submitted[0]), kAlice);
  REQUIRE(own.ok());
  CHECK(own->job().spec().script_args_size() == 1);
  absl::StatusOr<v1::GetJobResponse> other =
      h.controller_->GetJob(JobId(submitted[0]), kBob);
  REQUIRE(other.ok());
  CHECK(other->job().spec().script().empty());
  CHECK(other->job().spec().script_args().empty());

  v1::ListJobsRequest bad;
  bad.set_page_token("not-a-token");
  CHECK(h.controller_->ListJobs(bad, kRoot).status().code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("listings filter by user, name, state and job in the controller",
          "[controller]") {
  Harness h;
  const uint64_t a = h.Submit(kAlice, "", "train");
  const uint64_t b = h.Submit(kBob, "", "eval");
  const uint64_t array = h.Submit(kAlice, "0-2", "sweep");
  v1::ListJobsRequest request;
  request.mutable_filter()->add_users("bob");
  CHECK(Ids(h.List(request)) == std::vector<uint64_t>{b});
  request = v1::ListJobsRequest();
  request.mutable_filter()->add_names("train");
  CHECK(Ids(h.List(request)) == std::vector<uint64_t>{a});
  request = v1::ListJobsRequest();
  v1::JobSelector& task = *request.mutable_filter()->add_jobs();
  task.set_job_id(array);
  task.set_array_task_id(1);
  CHECK(Ids(h.List(request)) == std::vector<uint64_t>{array + 1});
  request = v1::ListJobsRequest();
  request.mutable_filter()->add_states(v1::RUNNING);
  CHECK(h.List(request).empty());
}

TEST_CASE("cancel and hold resolve their selection in the controller",
          "[controller]") {
  Harness h;
  const uint64_t mine = h.Submit(kAlice, "", "train");
  const uint64_t theirs = h.Submit(kBob, "", "train");
  const uint64_t array = h.Submit(kAlice, "0-1", "sweep");

  // Hold by the array's id: both tasks.
  v1::HoldRequest hold;
  hold.mutable_filter()->add_jobs()->set_job_id(array);
  v1::HoldResponse held = h.Hold(kAlice, hold);
  REQUIRE(held.results_size() == 2);
  CHECK(held.results(0).ok());
  CHECK(held.results(1).ok());

  // An ID_TASK that names no job says so, by its name.
  v1::CancelRequest unknown;
  v1::JobSelector& missing = *unknown.mutable_filter()->add_jobs();
  missing.set_job_id(array);
  missing.set_array_task_id(7);
  v1::CancelResponse refused = h.Cancel(kAlice, unknown);
  REQUIRE(refused.results_size() == 1);
  CHECK_FALSE(refused.results(0).ok());
  CHECK(refused.results(0).selector() == absl::StrCat(array, "_7"));
  CHECK(refused.results(0).error() ==
        absl::StrCat("invalid job id ", array, "_7"));

  // scancel -n train as alice: her job and bob's match, bob's is refused.
  v1::CancelRequest by_name;
  by_name.mutable_filter()->add_names("train");
  v1::CancelResponse cancelled = h.Cancel(kAlice, by_name);
  REQUIRE(cancelled.results_size() == 2);
  CHECK(cancelled.results(0).job_id() == mine);
  CHECK(cancelled.results(0).ok());
  CHECK(cancelled.results(1).job_id() == theirs);
  CHECK_THAT(cancelled.results(1).error(), Catch::Contains("access denied"));

  // scancel -u alice -t PENDING: only what is still pending (the array).
  v1::CancelRequest by_user;
  by_user.mutable_filter()->add_users("alice");
  by_user.mutable_filter()->add_states(v1::PENDING);
  cancelled = h.Cancel(kAlice, by_user);
  CHECK(cancelled.results_size() == 2);
  // Nothing left matches: no results, no error.
  CHECK(h.Cancel(kAlice, by_user).results_size() == 0);
  // A finished job by id: the controller says why.
  cancelled = h.Cancel(kAlice, CancelIds({mine}));
  REQUIRE(cancelled.results_size() == 1);
  CHECK_FALSE(cancelled.results(0).ok());
}

TEST_CASE("finished jobs leave memory after min_job_age for the history",
          "[controller]") {
  Harness h;
  const uint64_t done = h.Submit(kAlice);
  const uint64_t array = h.Submit(kAlice, "0-1");
  const uint64_t waiting = h.Submit(kAlice);
  REQUIRE(h.Cancel(kAlice, CancelIds({done, array})).results_size() == 3);
  v1::ListJobsRequest all;
  all.set_all(true);
  CHECK(h.List(all).size() == 4);

  // Not yet old enough.
  h.clock_.AdvanceMs(kMinJobAgeMs / 2);
  h.RunTimers();
  CHECK(h.List(all).size() == 4);

  h.clock_.AdvanceMs(kMinJobAgeMs);
  h.RunTimers();
  CHECK(Ids(h.List(all)) == std::vector<uint64_t>{waiting});
  CHECK(h.store_.in_history(done));
  CHECK(h.store_.live_records() == 1);

  // gantry job ID still answers, by id or ID_TASK, with the same rules.
  absl::StatusOr<v1::GetJobResponse> own =
      h.controller_->GetJob(JobId(done), kAlice);
  REQUIRE(own.ok());
  CHECK(own->job().state() == v1::CANCELLED);
  CHECK(own->job().spec().script_args_size() == 1);
  CHECK_FALSE(own->events().empty());
  absl::StatusOr<v1::GetJobResponse> other =
      h.controller_->GetJob(JobId(done), kBob);
  REQUIRE(other.ok());
  CHECK(other->job().spec().script().empty());
  CHECK(other->job().spec().script_args().empty());
  v1::GetJobRequest task;
  task.set_job_id(array);
  task.set_array_task_id(1);
  absl::StatusOr<v1::GetJobResponse> by_task =
      h.controller_->GetJob(task, kRoot);
  REQUIRE(by_task.ok());
  CHECK(by_task->job().id() == array + 1);

  // A restart loads only the live state; the history still answers, and
  // no id is handed out twice.
  h.StopController();
  h.StartController();
  CHECK(Ids(h.List(all)) == std::vector<uint64_t>{waiting});
  CHECK(h.controller_->GetJob(JobId(done), kAlice).ok());
  CHECK(h.Submit(kAlice) == waiting + 1);

  // Past the retention, the history forgets it.
  h.clock_.AdvanceMs(kRetentionMs + kMinJobAgeMs);
  h.RunTimers();
  // Found on the history thread, then deleted by the loop's next batch.
  REQUIRE(h.PumpUntil([&] { return !h.store_.in_history(done); }));
  CHECK(h.controller_->GetJob(JobId(done), kAlice).status().code() ==
        absl::StatusCode::kNotFound);
  CHECK_FALSE(h.store_.in_history(done));
}

TEST_CASE("a finished job a pending job depends on stays in memory",
          "[controller]") {
  Harness h;
  const uint64_t first = h.Submit(kAlice);
  REQUIRE(h.Cancel(kAlice, CancelIds({first})).results(0).ok());
  v1::SubmitRequest submit;
  v1::JobSpec& spec = *submit.mutable_spec();
  spec.set_script("#!/bin/sh\ntrue\n");
  spec.set_working_dir("/tmp");
  spec.set_dependency(absl::StrCat("afterany:", first));
  spec.set_hold(true);
  std::optional<absl::StatusOr<JobId>> submitted;
  h.controller_->Submit(submit, kAlice,
                        [&](absl::StatusOr<JobId> id) { submitted = id; });
  while (!submitted) h.io_.run_one();
  REQUIRE(submitted->ok());
  h.clock_.AdvanceMs(2 * kMinJobAgeMs);
  h.RunTimers();
  v1::ListJobsRequest all;
  all.set_all(true);
  CHECK(Ids(h.List(all)) ==
        std::vector<uint64_t>{first, (*submitted)->value()});
}

TEST_CASE("fair-share usage of retired jobs survives a restart",
          "[controller]") {
  Harness h;
  // Priority from fair share alone: a user with all the usage gets half
  // the points of one with none.
  h.options_.priority_weights.age_weight = 0;
  h.options_.priority_weights.size_weight = 0;
  h.StopController();
  v1::JobRecord ran;
  ran.set_id(100);
  ran.set_user("alice");
  ran.set_uid(1000);
  ran.set_state(v1::COMPLETED);
  const int64_t now = h.clock_.NowMs();
  ran.set_start_time_ms(now - 100'000);
  ran.set_end_time_ms(now - 10'000);
  ran.add_allocation()->set_cpus(4);
  v1::AttemptRecord& attempt = *ran.add_attempts();
  attempt.set_start_time_ms(now - 100'000);
  attempt.set_end_time_ms(now - 10'000);
  h.store_.Preload(ran);
  h.StartController();

  const uint64_t alice = h.Submit(kAlice);
  const uint64_t bob = h.Submit(kBob);
  auto priorities = [&] {
    h.RunTimers();  // a scheduling pass
    std::map<uint64_t, double> by_id;
    for (const v1::JobRecord& job : h.List(v1::ListJobsRequest())) {
      by_id[job.id()] = job.priority();
    }
    return by_id;
  };
  std::map<uint64_t, double> before = priorities();
  CHECK(before.at(alice) == Approx(before.at(bob) / 2));

  h.clock_.AdvanceMs(2 * kMinJobAgeMs);
  h.RunTimers();
  REQUIRE(h.store_.in_history(100));
  h.StopController();
  h.StartController();
  h.Submit(kBob);  // asks for a pass
  std::map<uint64_t, double> after = priorities();
  CHECK(after.at(alice) == Approx(after.at(bob) / 2));
}

}  // namespace job_retention_test
}  // namespace gantry
