#include "daemon/launch/step_input.h"

#include "absl/strings/str_cat.h"
#include "common/ids.h"
#include "common/step_io_pattern.h"

namespace gantry {
namespace {

StepIoNames TaskNames(const v1::JobRecord& job, uint32_t slurm_step,
                      const std::string& node, uint32_t task) {
  StepIoNames names;
  names.job_id = job.id();
  names.step_id = slurm_step;
  names.task = task;
  for (int i = 0; i < job.allocation_size(); ++i) {
    if (job.allocation(i).node() == node) {
      names.node_index = static_cast<uint32_t>(i);
    }
  }
  names.node = node;
  names.user = job.user();
  names.job_name = job.spec().name();
  return names;
}

}  // namespace

absl::Status CheckStepInput(const v1::StepInput& input,
                            const v1::JobRecord& job, uint32_t task_count) {
  switch (input.mode()) {
    case v1::StepInput::INPUT_ONE_TASK:
      if (input.task() >= task_count) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--input=", input.task(), ": the step has no task ", input.task(),
            " (its tasks are 0-", task_count == 0 ? 0 : task_count - 1, ")"));
      }
      return absl::OkStatus();
    case v1::StepInput::INPUT_FILE_PER_TASK:
      break;
    default:
      return absl::OkStatus();
  }
  if (input.pattern().empty() ||
      input.pattern().size() > kMaxStepInputPattern ||
      input.pattern().find('\0') != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("--input: the file name must be 1 to ",
                     kMaxStepInputPattern, " characters without NUL"));
  }
  // The longest it can become: the longest node name, the widest numbers.
  std::string longest_node;
  for (const v1::NodeAllocation& share : job.allocation()) {
    if (share.node().size() > longest_node.size()) longest_node = share.node();
  }
  const std::string widest = ExpandStepIoPattern(
      input.pattern(),
      TaskNames(job, ~uint32_t{0}, longest_node, ~uint32_t{0}));
  if (widest.size() > kMaxStepInputPattern) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--input: the file name can become ", widest.size(),
        " characters long once expanded; the limit is ", kMaxStepInputPattern));
  }
  return absl::OkStatus();
}

void SetStepTaskInput(const v1::StepInput& input, const v1::JobRecord& job,
                      const v1::StepRecord& step, const std::string& node,
                      uint32_t task, v1::RankLaunch& rank) {
  switch (input.mode()) {
    case v1::StepInput::INPUT_ALL_TASKS:
      rank.set_stdin_from_caller(true);
      return;
    case v1::StepInput::INPUT_ONE_TASK:
      rank.set_stdin_from_caller(task == input.task());
      return;
    case v1::StepInput::INPUT_FILE_PER_TASK:
      rank.set_stdin_path(ExpandStepIoPattern(
          input.pattern(),
          TaskNames(job, SlurmStepNumber(step.id()), node, task)));
      return;
    default:
      return;
  }
}

}  // namespace gantry
