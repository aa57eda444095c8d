// squeue's -o/--format and -O/--Format: a layout such as "%.18i %.9P %.8j
// %R" or "JobID:10,Name:.20,State" parsed once, then rendered as a header
// line and one line per job (or per step, squeue -s).
//
// -o fields are %[.|-][WIDTH]LETTER (cli/slurm/percent_format.h); the
// letters are Slurm's (squeue(1)): %i %A %F %K job ids, %j name, %u %U
// user, %g %G group, %P partition, %T %t state, %M %l %L time used, limit
// and left, %D nodes, %C CPUs, %c min CPUs, %m min memory, %d tmp disk, %b
// TRES per node, %R %r reason, %N %n %x %B %Y nodes, %V %S %e submit, start
// and end times, %a account, %q QOS, %Q %p priority, %E dependency, %f
// features, %k comment, %y nice, %v reservation, %Z work dir, %o command,
// %h oversubscribe, %H %I %J %z sockets/cores/threads, %O contiguous, %W
// licenses, %w wckey, %s select data. Unknown letters are left out, as
// Slurm does; the caller says so.
//
// -O fields are Slurm's names, case-insensitive (cli/slurm/squeue_fields.h),
// each "name[:[.][width][suffix]]", 20 columns when no width is given.
//
// Pure; a parsed SqueueFormat is immutable and safe to share.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/slurm/percent_format.h"
#include "gantry/v1/types.pb.h"

namespace gantry::cli {

// squeue's layouts: the default, -l/--long, -s/--steps and --start.
inline constexpr char kSqueueDefaultFormat[] =
    "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";
inline constexpr char kSqueueLongFormat[] =
    "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R";
inline constexpr char kSqueueStepsFormat[] = "%.15i %.8j %.9P %.8u %.9M %N";
inline constexpr char kSqueueStartFormat[] =
    "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R";

// The letters squeue -o knows here.
inline constexpr char kSqueueLetters[] =
    "iAFKjuUgGPTtMlLDCcmdbRrNnxBYVSeaqQpEfkyvZohHIJzOWws";

class SqueueFormat {
 public:
  // -o. `unknown` collects the letters left out (may be null: then an
  // unknown letter is INVALID_ARGUMENT, naming it).
  static absl::StatusOr<SqueueFormat> Parse(
      std::string_view format, std::vector<char>* unknown = nullptr);
  // -O: INVALID_ARGUMENT names an unknown field and the closest known one.
  static absl::StatusOr<SqueueFormat> ParseFields(std::string_view fields);

  std::string Header() const;
  // squeue -s's header: STEPID for %i and %A.
  std::string StepHeader() const;
  // `now_ms`: for the time used and left of running jobs. `folded_tasks`
  // non-empty ("[3-9%2]"): the line stands for those pending tasks of the
  // job's array, shown in %i and %K in place of the job's own index.
  std::string Row(const v1::JobRecord& job, int64_t now_ms,
                  const std::string& folded_tasks = "") const;
  // squeue -s: one running step of the job ("%i" is JOBID.STEPID, %j the
  // step's name, %M its time, %N its nodes).
  std::string StepRow(const v1::JobRecord& job, const v1::StepRecord& step,
                      int64_t now_ms) const;

 private:
  PercentFormat format_;
};

// One job's value of a squeue letter (the same words Row prints), for
// sorting and tests. `step` non-null: the step's view (squeue -s).
std::string SqueueValue(char letter, const v1::JobRecord& job, int64_t now_ms,
                        const v1::StepRecord* step = nullptr);

// One line of squeue: a job, or pending tasks of an array folded into one.
struct SqueueLine {
  const v1::JobRecord* job = nullptr;  // the first task, when folded
  std::string folded_tasks;            // "[3-9%2]"; empty: the job alone
};

// squeue's default view: the pending tasks of an array on one line, at the
// place of the first of them, as "[indices%throttle]" (running and ended
// tasks keep their own lines). A single pending task stays as it is.
std::vector<SqueueLine> FoldPendingArrayTasks(
    const std::vector<const v1::JobRecord*>& jobs);

}  // namespace gantry::cli
