// --deadline: when a pending or running job misses it, and what a
// submission's deadline must satisfy.
#include "daemon/scheduler/job_deadline.h"

#include <catch2/catch.hpp>
#include <string>

namespace gantry {

TEST_CASE("a pending job misses its deadline once it cannot end by it",
          "[job_deadline]") {
  constexpr int64_t kDeadline = 100'000;
  CHECK_FALSE(MissesDeadline(0, 0, 60'000, false));  // no deadline
  CHECK_FALSE(MissesDeadline(40'000, kDeadline, 60'000, false));
  CHECK(MissesDeadline(40'001, kDeadline, 60'000, false));
  // No time limit: only once the deadline itself has passed.
  CHECK_FALSE(MissesDeadline(99'999, kDeadline, 0, false));
  CHECK(MissesDeadline(kDeadline, kDeadline, 0, false));
}

TEST_CASE("a running job is stopped at its deadline", "[job_deadline]") {
  CHECK_FALSE(MissesDeadline(99'999, 100'000, 60'000, true));
  CHECK(MissesDeadline(100'000, 100'000, 60'000, true));
}

TEST_CASE("a submission's deadline is checked as Slurm does",
          "[job_deadline]") {
  const int64_t now = 1'000'000;
  CHECK(CheckDeadline(now, 0, 0, 60'000).ok());
  CHECK(CheckDeadline(now, now + 60'000, 0, 60'000).ok());
  CHECK(CheckDeadline(now, now + 1, 0, 0).ok());
  auto message = [](const absl::Status& status) {
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    return std::string(status.message());
  };
  CHECK(message(CheckDeadline(now, now - 1, 0, 0)) ==
        "--deadline is in the past");
  CHECK_THAT(message(CheckDeadline(now, now + 10'000, now + 20'000, 0)),
             Catch::StartsWith("incompatible begin and deadline"));
  CHECK(message(CheckDeadline(now, now + 59'000, 0, 60'000)) ==
        "the job's time limit (60 s) cannot run out before its --deadline, "
        "59 s after it could start");
  // Counted from --begin when it is later.
  CHECK_FALSE(CheckDeadline(now, now + 100'000, now + 50'000, 60'000).ok());
}

}  // namespace gantry
