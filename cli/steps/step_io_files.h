// srun -o/-e on the caller's side: each task's stdout and stderr to ours,
// to a file (one per task, node or step, as the filename pattern says,
// step_io_pattern.h), or nowhere. srun writes the files itself, as
// Slurm's does for patterns without %t/%n/%N (on a shared file system the
// others land in the same place).
//
// Thread-safe: SetStep comes from the thread that launched the step, Route
// from the output server's; a task that connects before the step's layout
// is known waits for it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "common/mutex.h"
#include "common/step_io_pattern.h"
#include "gantry/v1/types.pb.h"

namespace gantry::cli {

class StepIoFiles {
 public:
  // `out`/`err` as -o/-e give them (empty: here); without -e, stderr goes
  // where stdout does, as srun's. `program` names us in errors.
  StepIoFiles(std::string program, const std::string& out,
              const std::string& err, StepIoNames base);
  ~StepIoFiles();
  StepIoFiles(const StepIoFiles&) = delete;
  StepIoFiles& operator=(const StepIoFiles&) = delete;

  // Which task runs where, once the step started.
  void SetStep(const v1::JobRecord& job, const v1::StepRecord& step);

  // Where task `task`'s `stream` (1, 2) goes: a descriptor, or -1.
  int Route(uint32_t task, int stream);

 private:
  const std::string program_;
  const StepIoMode out_;
  const StepIoMode err_;
  Mutex mutex_;
  CondVar known_changed_;
  bool known_ ABSL_GUARDED_BY(mutex_) = false;
  StepIoNames base_ ABSL_GUARDED_BY(mutex_);
  std::map<uint32_t, std::pair<uint32_t, std::string>> task_nodes_
      ABSL_GUARDED_BY(mutex_);
  std::map<std::string, int> files_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace gantry::cli
