// sbatch --dependency: when a job may start, in terms of other jobs.
//
//   after:ID[+MIN][:ID[+MIN]...]  ID has started (or ended), MIN minutes ago
//   afterany:ID[:ID...]           ID has ended, in any state
//   afterok:ID[:ID...]            ID has ended COMPLETED
//   afternotok:ID[:ID...]         ID has ended in any other end state
//   singleton                     no earlier job of the same user and name
//                                 is still pending or running
// Terms joined by ',' must all hold; joined by '?', any one (mixing the two
// is an error, as in Slurm). A term that can no longer hold (afterok on a
// job that failed) makes the job wait forever with reason
// DependencyNeverSatisfied, as Slurm does; the user cancels it.
//
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry {

struct DependencyTerm {
  enum class Kind { kAfter, kAfterAny, kAfterOk, kAfterNotOk, kSingleton };
  Kind kind = Kind::kAfterAny;
  uint64_t job_id = 0;         // unused for kSingleton
  uint32_t delay_minutes = 0;  // kAfter only
  // ID_TASK: that task of the array `job_id`. The controller resolves it to
  // the task's own job id at submit, so stored dependencies never hold it.
  std::optional<uint32_t> array_task;
  bool operator==(const DependencyTerm&) const = default;
};

struct JobDependency {
  std::vector<DependencyTerm> terms;
  bool any_of = false;  // '?': one term is enough; ',': all are needed
  bool empty() const { return terms.empty(); }
};

// Parses the --dependency value. INVALID_ARGUMENT names the bad part.
absl::StatusOr<JobDependency> ParseDependency(const std::string& text);

// The canonical text (what squeue's %E shows), e.g. "afterok:12:13,singleton".
std::string FormatDependency(const JobDependency& dependency);

// What the evaluator needs to know of another job.
struct DependedJob {
  enum class Phase { kPending, kRunning, kCompleted, kFailed };
  Phase phase = Phase::kPending;  // kFailed: any end state but COMPLETED
  int64_t start_time_ms = 0;      // 0: never started
};

struct DependencyVerdict {
  enum class State { kSatisfied, kWaiting, kNever };
  State state = State::kWaiting;
  std::string detail;  // for humans: which term waits or failed
  // kWaiting on an after+MIN term only: when it will hold (0: unknown).
  int64_t ready_at_ms = 0;
};

// `lookup` returns the job of that id (nullopt: unknown, taken as ended in
// a failure, so afterany still releases the job); `singleton_blocked` says
// whether an earlier job of the same user and name is still active.
DependencyVerdict EvaluateDependency(
    const JobDependency& dependency,
    const std::function<std::optional<DependedJob>(uint64_t)>& lookup,
    bool singleton_blocked, int64_t now_ms);

}  // namespace gantry
