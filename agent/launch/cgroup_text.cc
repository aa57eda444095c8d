#include "agent/launch/cgroup_text.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/text.h"

namespace gantry::agent {
namespace {

constexpr uint64_t kCpuPeriodUs = 100'000;

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string DecodeOctalEscapes(absl::string_view text) {
  std::string decoded;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 3 < text.size()) {
      int value = 0;
      bool octal = true;
      for (size_t j = 1; j <= 3; ++j) {
        char digit = text[i + j];
        if (digit < '0' || digit > '7') octal = false;
        value = value * 8 + (digit - '0');
      }
      if (octal) {
        decoded.push_back(static_cast<char>(value));
        i += 3;
        continue;
      }
    }
    decoded.push_back(text[i]);
  }
  return decoded;
}

}  // namespace

std::optional<std::string> FindCgroup2Mount(std::string_view mountinfo) {
  for (absl::string_view line : absl::StrSplit(AsAbsl(mountinfo), '\n')) {
    // ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - TYPE ...
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (fields.size() < 7) continue;
    for (size_t i = 6; i + 1 < fields.size(); ++i) {
      if (fields[i] != "-") continue;
      if (fields[i + 1] == "cgroup2") return DecodeOctalEscapes(fields[4]);
      break;
    }
  }
  return std::nullopt;
}

std::optional<std::string> UnifiedCgroupPath(std::string_view proc_cgroup) {
  for (absl::string_view line : absl::StrSplit(AsAbsl(proc_cgroup), '\n')) {
    if (absl::ConsumePrefix(&line, "0::")) {
      line = absl::StripTrailingAsciiWhitespace(line);
      // A path outside the process's cgroup namespace reads "/../x": not a
      // place it can create cgroups under.
      if (line.empty() || line[0] != '/' || absl::StartsWith(line, "/..")) {
        return std::nullopt;
      }
      return std::string(line);
    }
  }
  return std::nullopt;
}

std::set<std::string> ParseControllerList(std::string_view text) {
  std::set<std::string> names;
  for (absl::string_view name : absl::StrSplit(
           AsAbsl(text), absl::ByAnyChar(" \t\n"), absl::SkipEmpty())) {
    names.emplace(name);
  }
  return names;
}

std::string CpuMaxFor(uint32_t cpus) {
  if (cpus == 0) return absl::StrCat("max ", kCpuPeriodUs);
  return absl::StrCat(uint64_t{cpus} * kCpuPeriodUs, " ", kCpuPeriodUs);
}

std::string MemoryMaxFor(uint64_t mem_mb) {
  if (mem_mb == 0) return "max";
  return absl::StrCat(mem_mb * 1024 * 1024);
}

uint64_t OomKillCount(std::string_view memory_events) {
  for (absl::string_view line : absl::StrSplit(AsAbsl(memory_events), '\n')) {
    std::pair<absl::string_view, absl::string_view> key_value =
        absl::StrSplit(line, absl::MaxSplits(' ', 1));
    uint64_t count = 0;
    if (key_value.first == "oom_kill" &&
        absl::SimpleAtoi(key_value.second, &count)) {
      return count;
    }
  }
  return 0;
}

bool ExitWasOutOfMemory(int exit_code, int signal, uint64_t oom_kills_before,
                        uint64_t oom_kills_now) {
  const bool failed = exit_code != 0 || signal != 0;
  return failed && oom_kills_now > oom_kills_before;
}

}  // namespace gantry::agent
