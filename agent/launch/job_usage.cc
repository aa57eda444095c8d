#include "agent/launch/job_usage.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/text.h"

namespace gantry::agent {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<uint64_t> ReadNumber(const std::string& path) {
  uint64_t value = 0;
  const std::string text = ReadFile(path);
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &value)) {
    return std::nullopt;
  }
  return value;
}

struct ProcessMemory {
  uint64_t rss_bytes = 0;
  uint64_t max_rss_bytes = 0;
};

ProcessMemory ReadProcessMemory(const std::vector<pid_t>& pids) {
  ProcessMemory memory;
  for (pid_t pid : pids) {
    const std::string status = ReadFile(absl::StrCat("/proc/", pid, "/status"));
    memory.rss_bytes += ProcStatusKb(status, "VmRSS").value_or(0) * 1024;
    memory.max_rss_bytes = std::max(
        memory.max_rss_bytes, ProcStatusKb(status, "VmHWM").value_or(0) * 1024);
  }
  return memory;
}

}  // namespace

std::optional<uint64_t> CpuStatUsageUsec(std::string_view cpu_stat) {
  for (absl::string_view line : absl::StrSplit(AsAbsl(cpu_stat), '\n')) {
    std::vector<absl::string_view> words =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    uint64_t value = 0;
    if (words.size() == 2 && words[0] == "usage_usec" &&
        absl::SimpleAtoi(words[1], &value)) {
      return value;
    }
  }
  return std::nullopt;
}

std::optional<uint64_t> ProcStatCpuTicks(std::string_view stat) {
  const size_t paren = stat.rfind(')');
  if (paren == std::string_view::npos) return std::nullopt;
  std::vector<absl::string_view> fields =
      absl::StrSplit(AsAbsl(stat.substr(paren + 1)), ' ', absl::SkipEmpty());
  // After the command: state is field 3, utime..cstime fields 14-17.
  constexpr size_t kUtime = 14 - 3;
  if (fields.size() < kUtime + 4) return std::nullopt;
  uint64_t total = 0;
  for (size_t i = kUtime; i < kUtime + 4; ++i) {
    int64_t ticks = 0;
    if (!absl::SimpleAtoi(fields[i], &ticks) || ticks < 0) return std::nullopt;
    total += static_cast<uint64_t>(ticks);
  }
  return total;
}

std::optional<uint64_t> ProcStatusKb(std::string_view status,
                                     std::string_view key) {
  for (absl::string_view line : absl::StrSplit(AsAbsl(status), '\n')) {
    if (!absl::ConsumePrefix(&line, AsAbsl(key)) ||
        !absl::ConsumePrefix(&line, ":")) {
      continue;
    }
    line = absl::StripAsciiWhitespace(line);
    absl::ConsumeSuffix(&line, "kB");
    uint64_t value = 0;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &value)) {
      return value;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

JobUsageReading ReadJobUsage(const std::string& cgroup_dir,
                             const std::vector<pid_t>& rank_pids) {
  JobUsageReading reading;
  if (!cgroup_dir.empty()) {
    if (std::optional<uint64_t> usage =
            CpuStatUsageUsec(ReadFile(cgroup_dir + "/cpu.stat"))) {
      reading.source = "cgroup";
      reading.cpu_usec = *usage;
      std::optional<uint64_t> current =
          ReadNumber(cgroup_dir + "/memory.current");
      if (current) {
        reading.rss_bytes = *current;
        reading.max_rss_bytes =
            ReadNumber(cgroup_dir + "/memory.peak").value_or(0);
      } else {
        // No memory controller here: the processes' own figures.
        std::vector<pid_t> pids;
        std::istringstream procs(ReadFile(cgroup_dir + "/cgroup.procs"));
        for (pid_t pid = 0; procs >> pid;) pids.push_back(pid);
        const ProcessMemory memory = ReadProcessMemory(pids);
        reading.rss_bytes = memory.rss_bytes;
        reading.max_rss_bytes = memory.max_rss_bytes;
      }
      return reading;
    }
  }
  reading.source = "proc";
  const long ticks_per_second = ::sysconf(_SC_CLK_TCK);
  for (pid_t pid : rank_pids) {
    const std::optional<uint64_t> ticks =
        ProcStatCpuTicks(ReadFile(absl::StrCat("/proc/", pid, "/stat")));
    if (ticks && ticks_per_second > 0) {
      reading.cpu_usec +=
          *ticks * 1'000'000 / static_cast<uint64_t>(ticks_per_second);
    }
  }
  const ProcessMemory memory = ReadProcessMemory(rank_pids);
  reading.rss_bytes = memory.rss_bytes;
  reading.max_rss_bytes = memory.max_rss_bytes;
  return reading;
}

}  // namespace gantry::agent
