#include "common/begin_time.h"

#include <cstdlib>
#include <ctime>

#include <catch2/catch.hpp>

#include "common/export_environment.h"

namespace gantry {
namespace begin_time_test {

// 2026-12-02 10:30:00 UTC; the tests run in UTC.
constexpr int64_t kNow = 1796207400;

struct Utc {
  Utc() {
    setenv("TZ", "UTC", 1);
    tzset();
  }
};

TEST_CASE("begin times in Slurm's forms", "[begin_time]") {
  Utc utc;
  CHECK(*ParseBeginTime("now", kNow) == kNow);
  CHECK(*ParseBeginTime("now+90", kNow) == kNow + 90);
  CHECK(*ParseBeginTime("now+2hours", kNow) == kNow + 7200);
  CHECK(*ParseBeginTime("NOW+1day", kNow) == kNow + 86400);
  CHECK(*ParseBeginTime("11:00", kNow) == kNow + 1800);
  CHECK(*ParseBeginTime("10:00", kNow) == kNow + 86400 - 1800);  // tomorrow
  CHECK(*ParseBeginTime("noon", kNow) == kNow + 5400);
  CHECK(*ParseBeginTime("midnight", kNow) == kNow + 13 * 3600 + 1800);
  CHECK(*ParseBeginTime("2026-12-03", kNow) == kNow + 13 * 3600 + 1800);
  CHECK(*ParseBeginTime("2026-12-02T12:00:30", kNow) == kNow + 5430);
  for (const char* bad : {"", "yesterday", "now+", "now+5parsecs", "25:00",
                          "2026-02-31", "2026-12-02T", "12:00:00:00"}) {
    INFO(bad);
    CHECK_FALSE(ParseBeginTime(bad, kNow).ok());
  }
}

TEST_CASE("the export option picks what the job inherits",
          "[export_environment]") {
  const std::map<std::string, std::string> env = {
      {"PATH", "/bin"}, {"HOME", "/root"}, {"SLURM_CONF", "x"}};
  CHECK(*ExportedEnvironment("", env) == env);
  CHECK(*ExportedEnvironment("ALL,A=1", env) ==
        std::map<std::string, std::string>{{"PATH", "/bin"},
                                           {"HOME", "/root"},
                                           {"SLURM_CONF", "x"},
                                           {"A", "1"}});
  CHECK(*ExportedEnvironment("NONE", env) ==
        std::map<std::string, std::string>{{"SLURM_CONF", "x"}});
  CHECK(*ExportedEnvironment("PATH,B=2", env) ==
        std::map<std::string, std::string>{
            {"PATH", "/bin"}, {"SLURM_CONF", "x"}, {"B", "2"}});
  CHECK_FALSE(ExportedEnvironment("ALL,NONE", env).ok());
  CHECK_FALSE(ExportedEnvironment("A-B", env).ok());
}

}  // namespace begin_time_test
}  // namespace gantry
