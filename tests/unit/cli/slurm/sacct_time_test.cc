// sacct's -S/-E times, -s states, -j ids and default window.
#include "cli/slurm/sacct_time.h"

#include <cstdlib>
#include <ctime>

#include <catch2/catch.hpp>

namespace gantry::cli {
namespace sacct_time_test {

// 2024-03-15T14:30:00Z, a Friday.
constexpr int64_t kNow = 1710513000;
constexpr int64_t kMidnight = 1710460800;  // 2024-03-15T00:00:00Z

void UseUtc() {
  setenv("TZ", "UTC", 1);
  tzset();
}

int64_t Parse(const char* text) {
  absl::StatusOr<int64_t> when = ParseSacctTime(text, kNow);
  INFO(text << ": " << when.status().ToString());
  REQUIRE(when.ok());
  return *when;
}

TEST_CASE("sacct times in Slurm's forms") {
  UseUtc();
  CHECK(Parse("now") == kNow);
  CHECK(Parse("NOW-1hour") == kNow - 3600);
  CHECK(Parse("now-2days") == kNow - 2 * 86400);
  CHECK(Parse("now-30") == kNow - 30);
  CHECK(Parse("now+1week") == kNow + 7 * 86400);
  CHECK(Parse("midnight") == kMidnight);
  CHECK(Parse("today") == kMidnight);
  CHECK(Parse("noon") == kMidnight + 12 * 3600);
  // Still to come today: yesterday's.
  CHECK(Parse("teatime") == kMidnight - 86400 + 16 * 3600);
  CHECK(Parse("fika") == kMidnight - 86400 + 15 * 3600);
  CHECK(Parse("2024-03-01") == 1709251200);
  CHECK(Parse("2024-03-01T10:20") == 1709251200 + 10 * 3600 + 20 * 60);
  CHECK(Parse("2024-03-01T10:20:30") == 1709251200 + 10 * 3600 + 20 * 60 + 30);
  CHECK(Parse("13:00") == kMidnight + 13 * 3600);
  CHECK(Parse("15:00:10") == kMidnight - 86400 + 15 * 3600 + 10);
  CHECK(Parse("1:00PM") == kMidnight + 13 * 3600);
  CHECK(Parse("0301") == 1709251200);
  CHECK(Parse("030124") == 1709251200);
  CHECK(Parse("03/01") == 1709251200);
  CHECK(Parse("03/01/24-10:00") == 1709251200 + 10 * 3600);
  CHECK(Parse("03.01.24") == 1709251200);
  // Later this year: last year's.
  CHECK(Parse("12/24") == 1703376000);
  CHECK(Parse("1709251200") == 1709251200);
}

TEST_CASE("sacct refuses malformed times with the forms it takes") {
  UseUtc();
  for (const char* bad :
       {"", "yesterdayish", "2024-13-01", "2024-03-01X10:00", "25:00", "now-",
        "now-3lightyears", "13/01", "0301-99:00", "2024-03-01T1:2"}) {
    INFO(bad);
    absl::StatusOr<int64_t> when = ParseSacctTime(bad, kNow);
    REQUIRE(!when.ok());
    CHECK(when.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(when.status().message()).find("valid:") !=
          std::string::npos);
  }
}

TEST_CASE("sacct -s: long and short names, any case") {
  absl::StatusOr<SacctStates> states = ParseSacctStates("cd,F,Cancelled,oom,r");
  REQUIRE(states.ok());
  CHECK(states->states ==
        std::set<v1::JobState>{v1::COMPLETED, v1::FAILED, v1::CANCELLED,
                               v1::OUT_OF_MEMORY, v1::RUNNING});
  absl::StatusOr<SacctStates> never = ParseSacctStates("RQ,suspended");
  REQUIRE(never.ok());
  CHECK(never->given);
  CHECK(never->states.empty());
  CHECK(!ParseSacctStates("CD,DONE").ok());
  CHECK(!ParseSacctStates(",").ok());
}

TEST_CASE("sacct -j: ids, array tasks and steps") {
  absl::StatusOr<std::vector<SacctJobId>> ids =
      ParseSacctJobIds("12,13_4,14.batch,15_2.0");
  REQUIRE(ids.ok());
  REQUIRE(ids->size() == 4);
  CHECK((*ids)[0].job_id == 12);
  CHECK(!(*ids)[0].array_task);
  CHECK((*ids)[1].array_task == 4u);
  CHECK((*ids)[2].step == "batch");
  CHECK((*ids)[3].job_id == 15);
  CHECK((*ids)[3].array_task == 2u);
  CHECK((*ids)[3].step == "0");
  for (const char* bad : {"", "x", "12.", "12.foo", "0", "12_", "12_x"}) {
    INFO(bad);
    CHECK(!ParseSacctJobIds(bad).ok());
  }
}

TEST_CASE("sacct's default time window follows -j and -s") {
  UseUtc();
  SacctWindow w = DefaultSacctWindow(false, false, {}, {}, kNow);
  CHECK(w.start == kMidnight);
  CHECK(w.end == kNow);
  w = DefaultSacctWindow(true, false, {}, {}, kNow);
  CHECK(w.start == 0);
  CHECK(w.end == kNow);
  w = DefaultSacctWindow(false, true, {}, {}, kNow);
  CHECK(w.start == kNow);
  CHECK(w.end == kNow);
  w = DefaultSacctWindow(false, true, int64_t{100}, {}, kNow);
  CHECK(w.start == 100);
  CHECK(w.end == 100);
  w = DefaultSacctWindow(true, true, {}, {}, kNow);
  CHECK(w.start == 0);
  CHECK(w.end == kNow);
  w = DefaultSacctWindow(false, false, int64_t{5}, int64_t{9}, kNow);
  CHECK(w.start == 5);
  CHECK(w.end == 9);
}

}  // namespace sacct_time_test
}  // namespace gantry::cli
