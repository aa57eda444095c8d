// sacct's query in the controller: jobs from the live state and the
// history in one id order, in pages, filtered by the time window, and only
// the caller's own unless an admin asks; and the scheduler's report.
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include "common/clock.h"
#include "daemon/controller/controller.h"
#include "daemon/controller/core/job_filter.h"
#include "tests/unit/support/controller_harness.h"

namespace gantry {
namespace accounting_test {

constexpr int64_t kMinJobAgeMs = 60'000;

ControllerOptions AccountingOptions() {
  ControllerOptions options;
  options.min_job_age_ms = kMinJobAgeMs;
  return options;
}

class Harness : public ControllerHarness {
 public:
  Harness() : ControllerHarness(AccountingOptions()) {}

  uint64_t Submit(const Caller& caller, const std::string& name) {
    v1::SubmitRequest submit;
    v1::JobSpec& spec = *submit.mutable_spec();
    spec.set_name(name);
    spec.set_script("#!/bin/sh\necho secret-script\n");
    spec.set_working_dir("/tmp");
    std::optional<absl::StatusOr<JobId>> submitted;
    controller_->Submit(submit, caller,
                        [&](absl::StatusOr<JobId> id) { submitted = id; });
    while (!submitted) io_.run_one();
    REQUIRE(submitted->ok());
    return (*submitted)->value();
  }

  void Cancel(const Caller& caller, uint64_t id) {
    v1::CancelRequest request;
    request.mutable_filter()->add_jobs()->set_job_id(id);
    std::optional<v1::CancelResponse> response;
    controller_->Cancel(request, caller,
                        [&](v1::CancelResponse r) { response = std::move(r); });
    while (!response) io_.run_one();
    REQUIRE(response->results(0).ok());
  }

  // Every page; counts them in pages_.
  std::vector<v1::JobRecord> Query(v1::AccountingRequest request,
                                   const Caller& caller) {
    std::vector<v1::JobRecord> jobs;
    pages_ = 0;
    do {
      absl::StatusOr<v1::AccountingResponse> page = Accounting(request, caller);
      INFO(page.status().ToString());
      REQUIRE(page.ok());
      ++pages_;
      for (const v1::JobRecord& job : page->jobs()) jobs.push_back(job);
      request.set_page_token(page->next_page_token());
    } while (!request.page_token().empty());
    return jobs;
  }

  int pages_ = 0;
};

TEST_CASE("accounting answers from the live state and the history",
          "[controller]") {
  Harness h;
  const uint64_t old_alice = h.Submit(kAlice, "old");
  const uint64_t old_bob = h.Submit(kBob, "old");
  h.Cancel(kAlice, old_alice);
  h.Cancel(kRoot, old_bob);
  h.clock_.AdvanceMs(2 * kMinJobAgeMs);
  h.RunTimers();
  REQUIRE(h.store_.in_history(old_alice));
  REQUIRE(h.store_.in_history(old_bob));
  const uint64_t new_alice = h.Submit(kAlice, "new");
  const uint64_t new_bob = h.Submit(kBob, "new");

  v1::AccountingRequest all;
  // Admins see everyone's, in id order across both stores, as summaries.
  std::vector<v1::JobRecord> jobs = h.Query(all, kRoot);
  CHECK(Ids(jobs) ==
        std::vector<uint64_t>{old_alice, old_bob, new_alice, new_bob});
  CHECK(jobs[0].spec().script().empty());
  CHECK(jobs[0].state() == v1::CANCELLED);
  CHECK(jobs[0].cancelled_by_uid() == kAlice.uid);
  CHECK(jobs[1].cancelled_by_uid() == 0);
  // Others only their own, whatever they ask for.
  CHECK(Ids(h.Query(all, kAlice)) ==
        std::vector<uint64_t>{old_alice, new_alice});
  v1::AccountingRequest bobs = all;
  bobs.mutable_filter()->add_users("bob");
  CHECK(h.Query(bobs, kAlice).empty());
  CHECK(Ids(h.Query(bobs, kRoot)) == std::vector<uint64_t>{old_bob, new_bob});
  // By id, name and state.
  v1::AccountingRequest by_id = all;
  by_id.mutable_filter()->add_jobs()->set_job_id(old_bob);
  CHECK(Ids(h.Query(by_id, kRoot)) == std::vector<uint64_t>{old_bob});
  v1::AccountingRequest by_state = all;
  by_state.mutable_filter()->add_states(v1::PENDING);
  CHECK(Ids(h.Query(by_state, kRoot)) ==
        std::vector<uint64_t>{new_alice, new_bob});
  // Pages of one job each.
  v1::AccountingRequest paged = all;
  paged.set_page_size(1);
  CHECK(h.Query(paged, kRoot).size() == 4);
  CHECK(h.pages_ >= 4);
  // A bad token is refused.
  v1::AccountingRequest bad = all;
  bad.set_page_token("x");
  CHECK(h.Accounting(bad, kRoot).status().code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("accounting's time window: eligible or running in it",
          "[controller]") {
  Harness h;
  const int64_t t0 = h.clock_.NowMs();
  const uint64_t ended = h.Submit(kAlice, "a");
  h.clock_.AdvanceMs(1000);
  h.Cancel(kAlice, ended);
  h.clock_.AdvanceMs(100'000);
  const uint64_t later = h.Submit(kAlice, "b");
  v1::AccountingRequest before;
  before.set_start_ms(t0);
  before.set_end_ms(t0 + 50'000);
  CHECK(Ids(h.Query(before, kAlice)) == std::vector<uint64_t>{ended});
  v1::AccountingRequest after;
  after.set_start_ms(t0 + 50'000);
  CHECK(Ids(h.Query(after, kAlice)) == std::vector<uint64_t>{later});
  v1::AccountingRequest backwards;
  backwards.set_start_ms(t0 + 10);
  backwards.set_end_ms(t0);
  CHECK(h.Accounting(backwards, kAlice).status().code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("the scheduler's report counts jobs and lists pending factors",
          "[controller]") {
  Harness h;
  const uint64_t first = h.Submit(kAlice, "a");
  h.Submit(kBob, "b");
  h.Cancel(kAlice, first);
  h.RunTimers();
  const v1::SchedulerReportResponse report = h.controller_->SchedulerReport();
  CHECK(report.jobs_submitted() == 2);
  CHECK(report.jobs_cancelled() == 1);
  CHECK(report.jobs_pending() == 1);
  REQUIRE(report.pending_size() == 1);
  CHECK(report.pending(0).user() == "bob");
  CHECK(report.pending(0).fair_share() == Approx(1.0));
  CHECK(report.pending(0).priority() ==
        Approx(report.weights().age() * report.pending(0).age() +
               report.weights().job_size() * report.pending(0).job_size() +
               report.weights().fair_share() * 1.0));
}

TEST_CASE("ActiveInWindow: from eligibility to the end", "[controller]") {
  v1::JobRecord job;
  job.set_submit_time_ms(100);
  job.set_state(v1::COMPLETED);
  job.set_end_time_ms(200);
  CHECK(ActiveInWindow(job, 0, 0, 1000));
  CHECK(ActiveInWindow(job, 150, 160, 1000));
  CHECK(ActiveInWindow(job, 200, 300, 1000));
  CHECK_FALSE(ActiveInWindow(job, 201, 300, 1000));
  CHECK_FALSE(ActiveInWindow(job, 0, 99, 1000));
  job.mutable_spec()->set_begin_time_ms(150);
  CHECK_FALSE(ActiveInWindow(job, 0, 120, 1000));
  job.set_state(v1::RUNNING);
  CHECK(ActiveInWindow(job, 900, 0, 1000));
  CHECK_FALSE(ActiveInWindow(job, 1001, 0, 1000));
}

}  // namespace accounting_test
}  // namespace gantry
