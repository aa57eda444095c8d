// sstat's measurements: cgroup and /proc text, parsed.
#include "agent/launch/job_usage.h"

#include <unistd.h>

#include <catch2/catch.hpp>

namespace gantry::agent {
namespace job_usage_test {

TEST_CASE("cpu.stat: usage_usec") {
  CHECK(CpuStatUsageUsec("usage_usec 17958\nuser_usec 15455\nsystem_usec "
                         "2502\n") == 17958u);
  CHECK(!CpuStatUsageUsec("user_usec 1\n").has_value());
  CHECK(!CpuStatUsageUsec("usage_usec x\n").has_value());
  CHECK(!CpuStatUsageUsec("").has_value());
}

TEST_CASE("/proc/PID/stat: CPU ticks of the process and its children") {
  // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt
  // majflt cmajflt utime stime cutime cstime ...
  CHECK(ProcStatCpuTicks("42 (my (odd) prog) S 1 42 42 0 -1 4194560 10 0 0 "
                         "0 100 20 3 4 20 0 1 0 5 6 7") == 127u);
  CHECK(!ProcStatCpuTicks("42 (x) S 1 2").has_value());
  CHECK(!ProcStatCpuTicks("no parenthesis").has_value());
  CHECK(
      !ProcStatCpuTicks("42 (x) S 1 42 42 0 -1 0 0 0 0 0 a 2 3 4").has_value());
}

TEST_CASE("/proc/PID/status: VmRSS and VmHWM in kB") {
  const char* status =
      "Name:\tpython3\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\n";
  CHECK(ProcStatusKb(status, "VmRSS") == 102400u);
  CHECK(ProcStatusKb(status, "VmHWM") == 204800u);
  CHECK(!ProcStatusKb(status, "VmSwap").has_value());
  CHECK(!ProcStatusKb("VmRSS:\tlots kB\n", "VmRSS").has_value());
}

TEST_CASE("ReadJobUsage falls back to /proc of the ranks") {
  const JobUsageReading reading = ReadJobUsage("", {::getpid()});
  CHECK(reading.source == "proc");
  CHECK(reading.rss_bytes > 0);
  CHECK(reading.max_rss_bytes >= reading.rss_bytes);
  // A directory that is no cgroup: the same fallback.
  CHECK(ReadJobUsage("/nonexistent", {::getpid()}).source == "proc");
}

}  // namespace job_usage_test
}  // namespace gantry::agent
