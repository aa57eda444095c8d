// sstat's measurements of a running job attempt on this node: CPU time
// used and resident memory (now and peak). From the job's cgroup where
// there is one (cpu.stat usage_usec; memory.current and memory.peak where
// the memory controller is enabled, else the VmRSS/VmHWM of every process
// in cgroup.procs), else from /proc of the ranks' own processes (their CPU
// time includes their reaped children's; their memory only their own).
//
// The parsers are pure and tested on fixture text; ReadJobUsage reads the
// kernel's files. Thread-safe (no state).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gantry::agent {

// usage_usec of cgroup v2 cpu.stat text; nullopt when absent.
std::optional<uint64_t> CpuStatUsageUsec(std::string_view cpu_stat);

// utime + stime + cutime + cstime (clock ticks) of /proc/PID/stat text;
// nullopt when it does not parse (the command name may hold spaces and
// parentheses: the fields start after the last ')').
std::optional<uint64_t> ProcStatCpuTicks(std::string_view stat);

// A "Key:   N kB" line of /proc/PID/status (VmRSS, VmHWM) in kB; nullopt
// when absent (kernel threads, zombies).
std::optional<uint64_t> ProcStatusKb(std::string_view status,
                                     std::string_view key);

struct JobUsageReading {
  uint64_t cpu_usec = 0;
  uint64_t rss_bytes = 0;
  uint64_t max_rss_bytes = 0;  // 0: unknown
  std::string source;          // "cgroup" or "proc"
};

// `cgroup_dir`: the job's cgroup directory, empty when there is none;
// `rank_pids`: the ranks' processes (the fallback without a cgroup).
JobUsageReading ReadJobUsage(const std::string& cgroup_dir,
                             const std::vector<pid_t>& rank_pids);

}  // namespace gantry::agent
