// What a submission makes gantryd store, and the limits on it: every task
// stores its script and arguments; the environment is stored once.
#include <string>

#include <catch2/catch.hpp>

#include "daemon/controller/core/submission_size.h"

namespace gantry {
namespace submission_size_test {

v1::JobSpec SmallSpec() {
  v1::JobSpec spec;
  spec.set_name("train");
  spec.set_script("#!/bin/sh\ntrue\n");
  spec.set_working_dir("/home/ada");
  return spec;
}

TEST_CASE("a small job is far below every limit") {
  const SubmissionSize size = MeasureSubmission(SmallSpec(), 1);
  CHECK(size.per_task < 2048);
  CHECK(size.total() == size.per_task);
  CHECK(CheckSubmissionSize(size).ok());
}

TEST_CASE("script arguments count per task, against their own limit") {
  v1::JobSpec spec = SmallSpec();
  const std::string big(1 << 20, 'a');
  spec.add_script_args(big);
  const SubmissionSize one_mib = MeasureSubmission(spec, 1);
  CHECK(one_mib.script_args == big.size() + 1);
  CHECK(one_mib.per_task > big.size());
  CHECK(CheckSubmissionSize(one_mib).ok());

  spec.add_script_args(big);
  spec.add_script_args("x");
  const absl::Status status = CheckSubmissionSize(MeasureSubmission(spec, 1));
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(status.message()),
             Catch::Contains("script arguments") &&
                 Catch::Contains("the limit is 2 MiB"));
}

TEST_CASE("an array stores its script and arguments once per task") {
  // The case: 20 tasks of 14 MiB arguments each would have been
  // 280 MiB in one commit; far smaller arguments times many tasks too.
  v1::JobSpec spec = SmallSpec();
  spec.add_script_args(std::string(1 << 20, 'a'));
  const SubmissionSize twenty = MeasureSubmission(spec, 20);
  CHECK(twenty.total() > 20u * (1 << 20));
  CHECK(CheckSubmissionSize(twenty).ok());
  const SubmissionSize hundred = MeasureSubmission(spec, 100);
  const absl::Status status = CheckSubmissionSize(hundred);
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(status.message()),
             Catch::Contains("100 task(s)") &&
                 Catch::Contains("the limit per submission is 64 MiB"));
}

TEST_CASE("the environment counts once, not per task") {
  v1::JobSpec spec = SmallSpec();
  (*spec.mutable_environment())["BIG"] = std::string(512 << 10, 'e');
  const SubmissionSize one = MeasureSubmission(spec, 1);
  const SubmissionSize many = MeasureSubmission(spec, 1000);
  CHECK(one.environment == many.environment);
  CHECK(one.per_task == many.per_task);
  CHECK(one.per_task < 2048);  // the environment is not in a task's share
  CHECK(many.total() == 1000 * many.per_task + many.environment);
  CHECK(CheckSubmissionSize(many).ok());
}

TEST_CASE("the whole record counts: names, paths and node lists too") {
  v1::JobSpec spec = SmallSpec();
  for (int i = 0; i < 600'000; ++i) {
    spec.add_required_nodes("node" + std::to_string(i));
  }
  spec.set_script(std::string(4 << 20, '#'));
  const absl::Status status = CheckSubmissionSize(MeasureSubmission(spec, 1));
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(status.message()),
             Catch::Contains("per task") && Catch::Contains("8 MiB"));
}

}  // namespace submission_size_test
}  // namespace gantry
