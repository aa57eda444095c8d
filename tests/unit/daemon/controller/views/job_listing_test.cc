// A listing's summaries: every field of a job but what it runs, from a
// const state, with others' private fields cleared and pages that go on
// where the last one ended.
#include "daemon/controller/views/job_listing.h"

#include <google/protobuf/util/message_differencer.h>
#include <catch2/catch.hpp>

#include "daemon/controller/views/job_summary.h"
#include "tests/unit/support/every_field.h"

namespace gantry {
namespace job_listing_test {

using gantry::testing::FillEveryField;

// Whether the summary of `record` is `record` without its payload; the
// differences otherwise.
std::string SummaryDifference(const v1::JobRecord& record) {
  v1::JobRecord expected = record;
  expected.mutable_spec()->clear_script();
  expected.mutable_spec()->clear_script_args();
  expected.mutable_spec()->clear_environment();
  std::string difference;
  google::protobuf::util::MessageDifferencer differencer;
  differencer.ReportDifferencesToString(&difference);
  if (!differencer.Compare(expected, JobSummaryOf(record)) &&
      difference.empty()) {
    return "differs";
  }
  return difference;
}

TEST_CASE("a summary holds every field of the job but what it runs",
          "[job_listing_test]") {
  v1::JobRecord record;
  FillEveryField(record, 3);
  REQUIRE(!record.spec().script().empty());
  REQUIRE(record.spec().script_args_size() == 1);
  REQUIRE(record.spec().environment_size() == 1);
  SECTION("a short payload (copied with the rest, then cleared)") {
    CHECK(SummaryDifference(record).empty());
  }
  SECTION("a long payload (never copied: the rest field by field)") {
    record.mutable_spec()->add_script_args(std::string(1 << 20, 'a'));
    CHECK(SummaryDifference(record).empty());
    record.mutable_spec()->clear_script_args();
    record.mutable_spec()->set_script(std::string(1 << 20, 's'));
    CHECK(SummaryDifference(record).empty());
  }
  CHECK(JobSummaryOf(v1::JobRecord()).ByteSizeLong() == 0);
}

void AddJob(ClusterState& state, uint64_t id, uint32_t uid,
            v1::JobState job_state) {
  JobRuntime& job = state.jobs[id];
  job.record.set_id(id);
  job.record.set_uid(uid);
  job.record.set_state(job_state);
  job.record.set_submission_token("token-" + std::to_string(id));
  job.record.mutable_spec()->set_script("#!/bin/sh\nsecret\n");
  job.record.mutable_spec()->add_script_args("--key=secret");
  (*job.record.mutable_spec()->mutable_environment())["KEY"] = "secret";
  job.record.mutable_spec()->set_name("job" + std::to_string(id));
  job.priority = 100 + id;
  state.Reindex(job);
}

TEST_CASE("a listing shows no payloads, and others' jobs without their token",
          "[job_listing_test]") {
  ClusterState state;
  AddJob(state, 1, 1000, v1::PENDING);
  AddJob(state, 2, 2000, v1::RUNNING);
  const ClusterState& view = state;
  const Caller owner{.uid = 1000, .gid = 1000, .user = "alice"};
  absl::StatusOr<v1::ListJobsResponse> listing =
      ListJobs(view, v1::ListJobsRequest(), owner);
  REQUIRE(listing.ok());
  REQUIRE(listing->jobs_size() == 2);
  for (const v1::JobRecord& job : listing->jobs()) {
    CHECK(job.spec().script().empty());
    CHECK(job.spec().script_args().empty());
    CHECK(job.spec().environment().empty());
    CHECK(job.spec().name() == "job" + std::to_string(job.id()));
    CHECK(job.priority() == 100 + job.id());
  }
  CHECK(listing->jobs(0).submission_token() == "token-1");
  CHECK(listing->jobs(1).submission_token().empty());
  // The live records keep what they run.
  CHECK(state.jobs.at(1).record.spec().script_args_size() == 1);
  const Caller admin{.uid = 0, .gid = 0, .user = "root", .admin = true};
  listing = ListJobs(view, v1::ListJobsRequest(), admin);
  REQUIRE(listing.ok());
  CHECK(listing->jobs(1).submission_token() == "token-2");
}

TEST_CASE("finished jobs only with --all, and a page goes on from its token",
          "[job_listing_test]") {
  ClusterState state;
  AddJob(state, 1, 1000, v1::COMPLETED);
  AddJob(state, 2, 1000, v1::PENDING);
  AddJob(state, 3, 1000, v1::PENDING);
  const Caller admin{.uid = 0, .gid = 0, .user = "root", .admin = true};
  v1::ListJobsRequest request;
  request.set_page_size(1);
  absl::StatusOr<v1::ListJobsResponse> page = ListJobs(state, request, admin);
  REQUIRE(page.ok());
  REQUIRE(page->jobs_size() == 1);
  CHECK(page->jobs(0).id() == 2);
  CHECK(page->next_page_token() == "2");
  request.set_page_token(page->next_page_token());
  page = ListJobs(state, request, admin);
  REQUIRE(page.ok());
  REQUIRE(page->jobs_size() == 1);
  CHECK(page->jobs(0).id() == 3);
  CHECK(page->next_page_token().empty());

  v1::ListJobsRequest all;
  all.set_all(true);
  page = ListJobs(state, all, admin);
  REQUIRE(page.ok());
  CHECK(page->jobs_size() == 3);

  v1::ListJobsRequest bad;
  bad.set_page_token("not a number");
  CHECK(ListJobs(state, bad, admin).status().code() ==
        absl::StatusCode::kInvalidArgument);
}

}  // namespace job_listing_test
}  // namespace gantry
