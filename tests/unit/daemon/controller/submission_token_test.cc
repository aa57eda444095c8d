// A submission retried with the same token (its answer was lost with the
// controller that stored it; the CLI asks the next one) gets the job it
// made, also after a restart over the same state, and only for the same
// user; a token is bounded.
#include <optional>
#include <string>

#include <catch2/catch.hpp>

#include "daemon/controller/controller.h"
#include "tests/unit/support/controller_harness.h"

namespace gantry {
namespace submission_token_test {

absl::StatusOr<JobId> Submit(ControllerHarness& harness, const Caller& caller,
                             const std::string& token) {
  v1::SubmitRequest submit;
  submit.mutable_spec()->set_name("train");
  submit.mutable_spec()->set_script("#!/bin/sh\ntrue\n");
  submit.mutable_spec()->set_working_dir("/tmp");
  submit.set_submission_token(token);
  std::optional<absl::StatusOr<JobId>> submitted;
  harness.controller_->Submit(submit, caller, [&](absl::StatusOr<JobId> id) {
    submitted = std::move(id);
  });
  while (!submitted) harness.io_.run_one();
  return *submitted;
}

size_t JobCount(ControllerHarness& harness) {
  v1::ListJobsRequest request;
  request.set_all(true);
  absl::StatusOr<v1::ListJobsResponse> listed =
      harness.controller_->ListJobs(request, kRoot);
  REQUIRE(listed.ok());
  return listed->jobs_size();
}

TEST_CASE("A retried submission gets the job it made, not a second one") {
  ControllerHarness harness{ControllerOptions()};
  absl::StatusOr<JobId> first = Submit(harness, kAlice, "token-1");
  REQUIRE(first.ok());
  absl::StatusOr<JobId> again = Submit(harness, kAlice, "token-1");
  REQUIRE(again.ok());
  CHECK(again->value() == first->value());
  CHECK(JobCount(harness) == 1);

  // Another token, or none, is another job.
  absl::StatusOr<JobId> other = Submit(harness, kAlice, "token-2");
  REQUIRE(other.ok());
  CHECK(other->value() != first->value());
  CHECK(Submit(harness, kAlice, "")->value() != other->value());
  CHECK(JobCount(harness) == 3);

  // The token is stored with the job: a restarted (or newly elected)
  // controller knows it.
  harness.StopController();
  harness.StartController();
  absl::StatusOr<JobId> after_restart = Submit(harness, kAlice, "token-1");
  REQUIRE(after_restart.ok());
  CHECK(after_restart->value() == first->value());
  CHECK(JobCount(harness) == 3);
}

TEST_CASE("Another user's token makes a job of their own") {
  ControllerHarness harness{ControllerOptions()};
  absl::StatusOr<JobId> alice = Submit(harness, kAlice, "shared-token");
  absl::StatusOr<JobId> bob = Submit(harness, kBob, "shared-token");
  REQUIRE(alice.ok());
  REQUIRE(bob.ok());
  CHECK(alice->value() != bob->value());
  // Bob's use of the token did not re-point it: Alice's retry still finds
  // her job, Bob's his, also after a restart.
  for (int restarted = 0; restarted < 2; ++restarted) {
    CHECK(Submit(harness, kAlice, "shared-token")->value() == alice->value());
    CHECK(Submit(harness, kBob, "shared-token")->value() == bob->value());
    CHECK(JobCount(harness) == 2);
    harness.StopController();
    harness.StartController();
  }
}

TEST_CASE("A job's submission token and datasets are shown only to its owner") {
  ControllerHarness harness{ControllerOptions()};
  v1::SubmitRequest submit;
  submit.mutable_spec()->set_name("train");
  submit.mutable_spec()->set_script("#!/bin/sh\ntrue\n");
  submit.mutable_spec()->set_working_dir("/tmp");
  v1::DatasetRef& dataset = *submit.mutable_spec()->add_datasets();
  dataset.set_name("secret_corpus");
  dataset.set_path("/shared/alice/secret_corpus");
  submit.set_submission_token("alice-token");
  std::optional<absl::StatusOr<JobId>> submitted;
  harness.controller_->Submit(submit, kAlice, [&](absl::StatusOr<JobId> id) {
    submitted = std::move(id);
  });
  while (!submitted) harness.io_.run_one();
  REQUIRE(submitted->ok());
  const JobId id = **submitted;

  absl::StatusOr<v1::GetJobResponse> own =
      harness.controller_->GetJob(id, kAlice);
  REQUIRE(own.ok());
  CHECK(own->job().submission_token() == "alice-token");
  CHECK(own->job().spec().datasets_size() == 1);
  absl::StatusOr<v1::GetJobResponse> other =
      harness.controller_->GetJob(id, kBob);
  REQUIRE(other.ok());
  CHECK(other->job().submission_token().empty());
  CHECK(other->job().spec().datasets().empty());

  // Listings (squeue shows every user's jobs) likewise.
  v1::ListJobsRequest list;
  for (const Caller* caller : {&kAlice, &kBob}) {
    absl::StatusOr<v1::ListJobsResponse> listed =
        harness.controller_->ListJobs(list, *caller);
    REQUIRE(listed.ok());
    REQUIRE(listed->jobs_size() == 1);
    const bool owner = caller == &kAlice;
    CHECK(listed->jobs(0).submission_token().empty() == !owner);
    CHECK(listed->jobs(0).spec().datasets().empty() == !owner);
  }
}

TEST_CASE("A submission token over 64 bytes is refused") {
  ControllerHarness harness{ControllerOptions()};
  absl::StatusOr<JobId> refused = Submit(harness, kAlice, std::string(65, 'x'));
  CHECK(refused.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(JobCount(harness) == 0);
}

}  // namespace submission_token_test
}  // namespace gantry
