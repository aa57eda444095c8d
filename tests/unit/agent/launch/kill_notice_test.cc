#include "agent/launch/kill_notice.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace gantry::agent {
namespace kill_notice_test {

TEST_CASE("a cancel notice is slurmstepd's line, byte for byte",
          "[kill_notice]") {
  CHECK(FormatKillNotice(1234, 0, "node07", v1::KillRanks::REASON_CANCELLED,
                         "2026-12-04T10:11:12") ==
        "slurmstepd: error: *** JOB 1234 ON node07 CANCELLED AT "
        "2026-12-04T10:11:12 ***\n");
  CHECK(FormatKillNotice(1234, 0, "node07", v1::KillRanks::REASON_TIME_LIMIT,
                         "2026-12-04T10:11:12") ==
        "slurmstepd: error: *** JOB 1234 ON node07 CANCELLED AT "
        "2026-12-04T10:11:12 DUE TO TIME LIMIT ***\n");
}

TEST_CASE("a step's notice names it by Slurm's step number", "[kill_notice]") {
  // Wire step 1 is what users see as N.0.
  CHECK(FormatKillNotice(77, 1, "n1", v1::KillRanks::REASON_CANCELLED,
                         "2026-01-02T03:04:05") ==
        "slurmstepd: error: *** STEP 77.0 ON n1 CANCELLED AT "
        "2026-01-02T03:04:05 ***\n");
  CHECK(FormatKillNotice(77, 3, "n1", v1::KillRanks::REASON_TIME_LIMIT,
                         "2026-01-02T03:04:05") ==
        "slurmstepd: error: *** STEP 77.2 ON n1 CANCELLED AT "
        "2026-01-02T03:04:05 DUE TO TIME LIMIT ***\n");
}

TEST_CASE("other stops write no notice", "[kill_notice]") {
  CHECK_FALSE(FormatKillNotice(1, 0, "n1", v1::KillRanks::REASON_OTHER,
                               "2026-01-02T03:04:05")
                  .has_value());
}

TEST_CASE("the time is Slurm's ISO format in local time", "[kill_notice]") {
  const char* saved = std::getenv("TZ");
  const std::string previous = saved ? saved : "";
  ::setenv("TZ", "UTC", 1);
  ::tzset();
  CHECK(SlurmTimeString(0) == "1970-01-01T00:00:00");
  CHECK(SlurmTimeString(1796379072) == "2026-12-04T10:11:12");
  ::setenv("TZ", "EET-2", 1);  // POSIX: two hours east, no tzdata needed
  ::tzset();
  CHECK(SlurmTimeString(1796379072) == "2026-12-04T12:11:12");
  if (saved) {
    ::setenv("TZ", previous.c_str(), 1);
  } else {
    ::unsetenv("TZ");
  }
  ::tzset();
}

TEST_CASE("a notice is appended to the target's file", "[kill_notice]") {
  char pattern[] = "/tmp/gantry-notice-test-XXXXXX";
  const std::string dir = ::mkdtemp(pattern);
  const std::string file = dir + "/slurm-5.out";
  std::ofstream(file) << "before\n";
  KillNoticeTarget target;
  target.job_id = 5;
  target.error_path = file;
  REQUIRE(
      WriteKillNotice(target, "line\n", std::chrono::milliseconds(2000)).ok());
  std::ifstream in(file);
  CHECK(std::string(std::istreambuf_iterator<char>(in), {}) ==
        "before\nline\n");
  std::filesystem::remove_all(dir);
}

TEST_CASE("a step's notice goes to its srun as task 0's stderr",
          "[kill_notice]") {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(listener >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&address), length) == 0);
  REQUIRE(::listen(listener, 4) == 0);
  REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr*>(&address),
                        &length) == 0);
  KillNoticeTarget target;
  target.job_id = 9;
  target.step = 1;
  target.io_address = "127.0.0.1:" + std::to_string(ntohs(address.sin_port));
  target.io_token = "secret";
  REQUIRE(WriteKillNotice(target, "the line\n", std::chrono::milliseconds(2000))
              .ok());
  const int connection = ::accept(listener, nullptr, nullptr);
  REQUIRE(connection >= 0);
  std::string received;
  char buffer[256];
  ssize_t got = 0;
  while ((got = ::read(connection, buffer, sizeof buffer)) > 0) {
    received.append(buffer, static_cast<size_t>(got));
  }
  CHECK(received == "secret 0 2\nthe line\n");
  ::close(connection);
  ::close(listener);
  // Nobody listening any more: an error, not a hang.
  CHECK_FALSE(
      WriteKillNotice(target, "x\n", std::chrono::milliseconds(500)).ok());
}

}  // namespace kill_notice_test
}  // namespace gantry::agent
