// SLURM_TASK_PID, the pid of the task's own process, as Slurm gives it to
// every task. Ranks are started with vfork (rank_child.h), so the pid is
// known only in the child, which may not allocate: the parent reserves the
// variable in the rank's environment with room for any pid, and the child
// writes its pid's digits into that room before exec.
//
// Why writing there is sound although the vfork child shares the agent's
// memory: the room belongs to one environment string built by the thread
// that calls vfork, for this one child, and referenced by nothing else; that
// thread is suspended until the child execs or exits, and no other thread
// knows the string, so the child is its only user meanwhile. execve copies
// the environment into the new program before the parent resumes, and the
// parent drops the strings unread. FillTaskPid writes only inside the
// reserved bytes and calls nothing.
//
// Thread-safe: pure functions over the caller's memory; FillTaskPid is
// async-signal-safe.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

namespace gantry::agent {

inline constexpr char kTaskPidPrefix[] = "SLURM_TASK_PID=";
// Digits of the largest pid_t, and the terminating NUL.
inline constexpr size_t kTaskPidRoom = 11;

// Where the child writes: the digits start at `digits`, `room` bytes in
// all. Null when there is no slot.
struct TaskPidSlot {
  char* digits = nullptr;
  size_t room = 0;
};

// Replaces any SLURM_TASK_PID in `environment` ("KEY=value" strings, sorted
// by key, as SanitizedRankEnvironment makes them) with a slot and returns
// where it is. The slot stays valid while `environment` is not changed.
TaskPidSlot ReserveTaskPid(std::vector<std::string>& environment);

// Writes `pid` in decimal into the slot, NUL-terminated. Async-signal-safe
// (the vfork child calls it); a pid that does not fit (impossible for a
// pid_t) leaves an empty value.
void FillTaskPid(const TaskPidSlot& slot, pid_t pid);

}  // namespace gantry::agent
