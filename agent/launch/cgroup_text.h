// The text of the kernel files a job cgroup is built from: where cgroup v2
// is mounted (/proc/self/mountinfo), which cgroup a process is in
// (/proc/self/cgroup), the controller lists, the limits a job's request
// turns into (cpu.max, memory.max), and the OOM counter (memory.events).
//
// Pure functions, so that the parsing is tested on fixture strings rather
// than on whatever the test machine's kernel offers. Thread-safe (no state).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace gantry::agent {

// The mount point of the first cgroup2 file system in mountinfo text
// ("/sys/fs/cgroup" on a pure v2 host, "/sys/fs/cgroup/unified" on a hybrid
// one); nullopt when none is mounted. Octal escapes (\040) are decoded.
std::optional<std::string> FindCgroup2Mount(std::string_view mountinfo);

// The process's cgroup v2 path ("/system.slice/gantry-agent.service") from
// /proc/PID/cgroup text: the "0::" line. nullopt when there is none.
std::optional<std::string> UnifiedCgroupPath(std::string_view proc_cgroup);

// The names in cgroup.controllers or cgroup.subtree_control text.
std::set<std::string> ParseControllerList(std::string_view text);

// cpu.max for `cpus` CPUs over the default 100 ms period
// ("400000 100000" for 4); "max 100000" (no limit) for 0.
std::string CpuMaxFor(uint32_t cpus);

// memory.max for a request in MiB, in bytes; "max" (no limit) for 0.
std::string MemoryMaxFor(uint64_t mem_mb);

// The `oom_kill` counter of memory.events text; 0 when it is absent.
uint64_t OomKillCount(std::string_view memory_events);

// Whether a rank's end is an out-of-memory failure: the rank failed (a
// signal or a non-zero exit: the OOM killer may have picked the rank itself
// or one of its children, whose death the script then reports) and the
// job's oom_kill counter grew while it ran. A rank that exits 0 coped with
// the loss of a child and is not a failure.
bool ExitWasOutOfMemory(int exit_code, int signal, uint64_t oom_kills_before,
                        uint64_t oom_kills_now);

}  // namespace gantry::agent
