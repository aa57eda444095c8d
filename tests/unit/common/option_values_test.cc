// The values sbatch's options take that every command parses alike: time
// limits and memory sizes, in every format Slurm reads.
#include "common/option_values.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/unit/support/status_message.h"

namespace gantry {
namespace option_values_test {

using testing::Message;

TEST_CASE("ParseTimeLimit reads every Slurm format", "[option_values]") {
  struct Case {
    std::string text;
    uint64_t seconds;
  };
  const std::vector<Case> cases = {
      {"0", 0},                    // Slurm: zero means no limit
      {"1", 60},                   // minutes
      {"90", 5400},                // minutes may exceed 59
      {"10:30", 630},              // minutes:seconds
      {"90:00", 5400},             // leading minutes may exceed 59
      {"1:02:03", 3723},           // hours:minutes:seconds
      {"48:00:00", 172800},        // leading hours may exceed 23
      {"2-0", 172800},             // days-hours
      {"2-12", 216000},            // days-hours
      {"1-01:30", 91800},          // days-hours:minutes
      {"1-01:30:15", 91815},       // days-hours:minutes:seconds
      {"365-00:00:00", 31536000},  // the maximum
      {"364-23:59:59", 31535999},
      {"525600", 31536000},  // 365 days in minutes
      {"00:00:01", 1},
      {"007", 420},
      {"UNLIMITED", 0},
      {"unlimited", 0},
      {"INFINITE", 0},
      {"Infinite", 0},
      {"-1", 0},
  };
  for (const Case& c : cases) {
    INFO("time: " << c.text);
    const absl::StatusOr<uint64_t> seconds = ParseTimeLimit(c.text);
    INFO("status: " << Message(seconds.status()));
    REQUIRE(seconds.ok());
    CHECK(*seconds == c.seconds);
  }

  struct Bad {
    std::string text;
    std::string reason;
  };
  const std::string kFormats =
      "expected minutes, minutes:seconds, hours:minutes:seconds, days-hours, "
      "days-hours:minutes, days-hours:minutes:seconds or UNLIMITED";
  const std::vector<Bad> bad = {
      {"", kFormats},
      {"abc", kFormats},
      {"-5", kFormats},
      {"-2", kFormats},
      {"1:2:3:4", kFormats},
      {"1-2:3:4:5", kFormats},
      {"1-", kFormats},
      {"-1-0", kFormats},
      {"1-2-3", kFormats},
      {":30", kFormats},
      {"30:", kFormats},
      {"1::2", kFormats},
      {"1.5", kFormats},
      {" 10", kFormats},
      {"10 ", kFormats},
      {"+10", kFormats},
      {"1h", kFormats},
      {"1234567890", "longer than 365 days"},
      {"1234567890-0", "longer than 365 days"},
      {"10:60", "seconds must be below 60"},
      {"1:60:00", "minutes must be below 60"},
      {"1:00:60", "seconds must be below 60"},
      {"1-24", "hours must be below 24 after days"},
      {"1-0:60", "minutes must be below 60"},
      {"1-0:0:60", "seconds must be below 60"},
      {"366-0", "longer than 365 days"},
      {"525601", "longer than 365 days"},
      {"8761:00:00", "longer than 365 days"},
      {"999999999-23:59:59", "longer than 365 days"},
  };
  for (const Bad& c : bad) {
    INFO("time: " << c.text);
    const absl::StatusOr<uint64_t> seconds = ParseTimeLimit(c.text);
    REQUIRE_FALSE(seconds.ok());
    CHECK(seconds.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(Message(seconds.status()) ==
          "invalid time limit \"" + c.text + "\": " + c.reason);
  }
}

TEST_CASE("ParseMemoryMb reads Slurm sizes", "[option_values]") {
  struct Case {
    std::string text;
    uint64_t mb;
  };
  const std::vector<Case> cases = {
      {"0", 0},
      {"1", 1},
      {"512", 512},
      {"512M", 512},
      {"512m", 512},
      {"1K", 1},  // rounded up
      {"1024K", 1},
      {"1025k", 2},
      {"0K", 0},
      {"4G", 4096},
      {"4g", 4096},
      {"1T", 1048576},
      {"2t", 2097152},
      {"0010G", 10240},
      {"16777216T", 17592186044416},
      // The 19-digit maximum, in kilobytes and in megabytes.
      {"9999999999999999999K", 9765625000000000},
      {"9999999999999999999", 9999999999999999999ull},
  };
  for (const Case& c : cases) {
    INFO("memory: " << c.text);
    const absl::StatusOr<uint64_t> mb = ParseMemoryMb(c.text);
    INFO("status: " << Message(mb.status()));
    REQUIRE(mb.ok());
    CHECK(*mb == c.mb);
  }

  struct Bad {
    std::string text;
    std::string reason;
  };
  const std::string kFormat =
      "expected a whole number with an optional K, M, G or T suffix";
  const std::vector<Bad> bad = {
      {"", kFormat},
      {"G", kFormat},
      {"-1", kFormat},
      {"-1G", kFormat},
      {"1.5G", kFormat},
      {"16GB", kFormat},
      {"4P", kFormat},
      {"4 G", kFormat},
      {" 4G", kFormat},
      {"G4", kFormat},
      {"4GG", kFormat},
      {"0x10", kFormat},
      {"99999999999999999999", "too large"},
      {"99999999999999999G", "too large"},
      {"9999999999999999T", "too large"},
  };
  for (const Bad& c : bad) {
    INFO("memory: " << c.text);
    const absl::StatusOr<uint64_t> mb = ParseMemoryMb(c.text);
    REQUIRE_FALSE(mb.ok());
    CHECK(Message(mb.status()) ==
          "invalid memory size \"" + c.text + "\": " + c.reason);
  }
}

}  // namespace option_values_test
}  // namespace gantry
