#include "cli/steps/step_io_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>

#include "common/ids.h"

namespace gantry::cli {

StepIoFiles::StepIoFiles(std::string program, const std::string& out,
                         const std::string& err, StepIoNames base)
    : program_(std::move(program)),
      out_(ParseStepIoMode(out.empty() ? "all" : out)),
      err_(ParseStepIoMode(err.empty() ? out.empty() ? "all" : out : err)),
      base_(std::move(base)) {}

StepIoFiles::~StepIoFiles() {
  for (const auto& [path, fd] : files_) ::close(fd);
}

void StepIoFiles::SetStep(const v1::JobRecord& job,
                          const v1::StepRecord& step) {
  MutexLock lock(mutex_);
  base_.step_id = SlurmStepNumber(step.id());
  for (const v1::NodeAllocation& share : step.nodes()) {
    uint32_t node_index = 0;
    for (int i = 0; i < job.allocation_size(); ++i) {
      if (job.allocation(i).node() == share.node()) node_index = i;
    }
    for (uint32_t t = 0; t < share.rank_count(); ++t) {
      task_nodes_[share.first_rank() + t] = {node_index, share.node()};
    }
  }
  known_ = true;
  known_changed_.NotifyAll();
}

int StepIoFiles::Route(uint32_t task, int stream) {
  const StepIoMode& mode = stream == 2 ? err_ : out_;
  switch (mode.kind) {
    case StepIoMode::Kind::kAll:
      return stream;
    case StepIoMode::Kind::kNone:
      return -1;
    case StepIoMode::Kind::kTask:
      return task == mode.task ? stream : -1;
    case StepIoMode::Kind::kFile:
      break;
  }
  MutexLock lock(mutex_);
  known_changed_.WaitFor(lock, std::chrono::seconds(30), [this] {
    mutex_.AssertHeld();
    return known_;
  });
  StepIoNames names = base_;
  names.task = task;
  auto where = task_nodes_.find(task);
  if (where != task_nodes_.end()) {
    names.node_index = where->second.first;
    names.node = where->second.second;
  }
  const std::string path = ExpandStepIoPattern(mode.pattern, names);
  auto open = files_.find(path);
  if (open != files_.end()) return open->second;
  const int fd = ::open(
      path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::cerr << program_ << ": error: cannot open " << path << ": "
              << std::strerror(errno) << "\n";
    return -1;
  }
  files_[path] = fd;
  return fd;
}

}  // namespace gantry::cli
