#include "common/job_array.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace gantry {
namespace job_array_test {

using Ids = std::vector<uint32_t>;

TEST_CASE("ParseJobArray reads sbatch's forms", "[job_array]") {
  struct Case {
    std::string text;
    Ids ids;
    uint32_t max_running;
    uint32_t step;
    std::string canonical;
  };
  const std::vector<Case> cases = {
      {"0-3", {0, 1, 2, 3}, 0, 1, "0-3"},
      {"7", {7}, 0, 1, "7"},
      {"1,3,5-7", {1, 3, 5, 6, 7}, 0, 1, "1,3,5-7"},
      {"0-15:4", {0, 4, 8, 12}, 0, 4, "0-12:4"},
      {"0-5:2", {0, 2, 4}, 0, 2, "0-4:2"},
      {"0-99%10", {}, 10, 1, "0-99%10"},
      {"1,3,5%2", {1, 3, 5}, 2, 2, "1-5:2%2"},
      // Overlaps merge and order does not matter, as in Slurm.
      {"5-7,0-6", {0, 1, 2, 3, 4, 5, 6, 7}, 0, 1, "0-7"},
      {"3,3,3", {3}, 0, 1, "3"},
      {"007", {7}, 0, 1, "7"},
      {"0,4000000", {0, 4'000'000}, 0, 4'000'000, "0,4000000"},
      {"1,2,4", {1, 2, 4}, 0, 1, "1-2,4"},
      {"0,2,3", {0, 2, 3}, 0, 1, "0,2-3"},
      {"0-4:2,5", {0, 2, 4, 5}, 0, 1, "0,2,4-5"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    absl::StatusOr<JobArraySpec> spec = ParseJobArray(c.text);
    REQUIRE(spec.ok());
    if (!c.ids.empty()) CHECK(spec->task_ids == c.ids);
    CHECK(spec->max_running == c.max_running);
    CHECK(spec->step() == c.step);
    CHECK(FormatJobArray(*spec) == c.canonical);
    absl::StatusOr<JobArraySpec> again = ParseJobArray(c.canonical);
    REQUIRE(again.ok());
    CHECK(*again == *spec);
  }
  absl::StatusOr<JobArraySpec> hundred = ParseJobArray("0-99%10");
  REQUIRE(hundred.ok());
  CHECK(hundred->task_ids.size() == 100);
  CHECK(hundred->min_task_id() == 0);
  CHECK(hundred->max_task_id() == 99);
}

TEST_CASE("ParseJobArray takes exactly the limits", "[job_array]") {
  absl::StatusOr<JobArraySpec> most = ParseJobArray("0-9999");
  REQUIRE(most.ok());
  CHECK(most->task_ids.size() == kMaxArrayTasks);
  absl::StatusOr<JobArraySpec> spread = ParseJobArray("0-3999999:400");
  REQUIRE(spread.ok());
  CHECK(spread->task_ids.size() == 10'000);
  CHECK(ParseJobArray("4000000").ok());
}

TEST_CASE("ParseJobArray refuses bad values with a reason", "[job_array]") {
  struct Case {
    std::string text;
    std::string reason;  // a part of the message
  };
  const std::vector<Case> cases = {
      {"", "empty value"},
      {"x", "\"x\" is not an index or range"},
      {"5-1", "\"5-1\" starts above its end"},
      {"0-20000", "\"0-20000\" is 20001 tasks; the limit is 10000"},
      {"0-9999,10000", "more than 10000 tasks"},
      {"0-9999,20000-29999", "more than 10000 tasks"},
      {"4000001", "index 4000001 is above the limit of 4000000"},
      {"0-99999999999999999999", "above the limit of 4000000"},
      {"1-9:0", "the step in \"1-9:0\" must be a whole number of at least 1"},
      {"1-9:x", "the step"},
      {"3:2", "a step needs a range"},
      {"0-3%0", "at least 1 task"},
      {"0-3%", "the limit after '%' must be a whole number"},
      {"0-3%x", "the limit after '%' must be a whole number"},
      {"%4", "no indices"},
      {"1,,2", "empty entry"},
      {"1,", "empty entry"},
      {"-1", "is not an index or range"},
      {"1-", "is not an index or range"},
      {"1-2-3", "is not an index or range"},
      {" 1", "is not an index or range"},
      {std::string(9000, '1'), "longer than 8192 characters"},
  };
  for (const Case& c : cases) {
    INFO(c.text.substr(0, 60));
    absl::StatusOr<JobArraySpec> spec = ParseJobArray(c.text);
    REQUIRE_FALSE(spec.ok());
    CHECK(spec.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(spec.status().message()),
               Catch::Matchers::Contains(c.reason));
  }
}

}  // namespace job_array_test
}  // namespace gantry
