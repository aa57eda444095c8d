#include "cli/steps/step_input_mode.h"

#include "absl/strings/str_cat.h"
#include "common/step_io_pattern.h"

namespace gantry::cli {

absl::StatusOr<StepInputChoice> ChooseStepInput(std::string_view option,
                                                bool pty) {
  StepInputChoice choice;
  // Not given: as "all".
  const StepIoMode mode = ParseStepIoMode(option.empty() ? "all" : option);
  if (pty && mode.kind != StepIoMode::Kind::kAll &&
      mode.kind != StepIoMode::Kind::kNone) {
    return absl::InvalidArgumentError(
        absl::StrCat("--input=", std::string(option),
                     " cannot be combined with --pty: task 0 reads your "
                     "terminal and the other tasks read nothing"));
  }
  switch (mode.kind) {
    case StepIoMode::Kind::kAll:
      if (pty) break;  // task 0's terminal; the others /dev/null
      choice.request.set_mode(v1::StepInput::INPUT_ALL_TASKS);
      choice.relay = true;
      break;
    case StepIoMode::Kind::kNone:
      break;
    case StepIoMode::Kind::kTask:
      choice.request.set_mode(v1::StepInput::INPUT_ONE_TASK);
      choice.request.set_task(mode.task);
      choice.relay = true;
      break;
    case StepIoMode::Kind::kFile:
      if (StepIoPatternPerTask(mode.pattern)) {
        choice.request.set_mode(v1::StepInput::INPUT_FILE_PER_TASK);
        choice.request.set_pattern(mode.pattern);
      } else {
        choice.request.set_mode(v1::StepInput::INPUT_ALL_TASKS);
        choice.relay = true;
        choice.local_pattern = mode.pattern;
      }
      break;
  }
  return choice;
}

}  // namespace gantry::cli
