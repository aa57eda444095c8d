// squeue's -o/--format: a format string such as "%.18i %.9P %.8j %R" parsed
// once, then rendered as a header line and one line per job.
//
// Each field is %[.|-][WIDTH]LETTER (cli/slurm/percent_format.h). Letters:
//   %i %A job id     %j name          %u user        %P partition
//   %T state         %t state (short) %M time used   %l time limit
//   %L time left     %D nodes         %C CPUs        %b GPUs per node (TRES)
//   %R nodelist, or (reason) while pending           %N nodelist
//   %V submit time   %S start time    %e end time    %r reason
//   %a account       %Q priority      %E dependency  %f features
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

// squeue's default layout: JOBID PARTITION NAME USER ST TIME NODES
// NODELIST(REASON).
inline constexpr char kSqueueDefaultFormat[] =
    "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";

class SqueueFormat {
 public:
  // INVALID_ARGUMENT names an unknown letter or a "%" with none, and lists
  // the letters known.
  static absl::StatusOr<SqueueFormat> Parse(std::string_view format);

  std::string Header() const;
  // `now_ms`: for the time used and left of running jobs. `folded_tasks`
  // non-empty ("[3-9%2]"): the line stands for those pending tasks of the
  // job's array, shown in %i and %K in place of the job's own index.
  std::string Row(const v1::JobRecord& job, int64_t now_ms,
                  const std::string& folded_tasks = "") const;

 private:
  PercentFormat format_;
};

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
