#include "cli/steps/step_input_mode.h"

#include <catch2/catch.hpp>

namespace gantry::cli {
namespace step_input_mode_test {

StepInputChoice Choose(const std::string& option, bool pty = false) {
  absl::StatusOr<StepInputChoice> choice = ChooseStepInput(option, pty);
  REQUIRE(choice.ok());
  return *choice;
}

TEST_CASE("srun -i as man srun describes it", "[step_input_mode]") {
  // Default and "all": srun's stdin to every task.
  for (const char* all : {"", "all"}) {
    StepInputChoice choice = Choose(all);
    CHECK(choice.request.mode() == v1::StepInput::INPUT_ALL_TASKS);
    CHECK(choice.relay);
    CHECK(choice.local_pattern.empty());
  }
  StepInputChoice none = Choose("none");
  CHECK(none.request.mode() == v1::StepInput::INPUT_NONE);
  CHECK_FALSE(none.relay);

  StepInputChoice one = Choose("1");
  CHECK(one.request.mode() == v1::StepInput::INPUT_ONE_TASK);
  CHECK(one.request.task() == 1);
  CHECK(one.relay);
  CHECK(one.local_pattern.empty());

  // A file on srun's host, read by srun and sent to every task.
  StepInputChoice here = Choose("data-%j.txt");
  CHECK(here.request.mode() == v1::StepInput::INPUT_ALL_TASKS);
  CHECK(here.relay);
  CHECK(here.local_pattern == "data-%j.txt");

  // One per task: opened on the task's node.
  for (const char* per_task : {"in.%t", "in.%2n", "%N.in"}) {
    StepInputChoice choice = Choose(per_task);
    CHECK(choice.request.mode() == v1::StepInput::INPUT_FILE_PER_TASK);
    CHECK(choice.request.pattern() == per_task);
    CHECK_FALSE(choice.relay);
  }
}

TEST_CASE("srun --pty gives task 0 the terminal", "[step_input_mode]") {
  StepInputChoice pty = Choose("", /*pty=*/true);
  CHECK(pty.request.mode() == v1::StepInput::INPUT_NONE);
  CHECK_FALSE(pty.relay);
  CHECK(Choose("none", true).request.mode() == v1::StepInput::INPUT_NONE);
  for (const char* other : {"0", "in.%t", "data.txt"}) {
    absl::StatusOr<StepInputChoice> refused = ChooseStepInput(other, true);
    CHECK(absl::IsInvalidArgument(refused.status()));
    CHECK(refused.status().message().find("cannot be combined with --pty") !=
          std::string_view::npos);
  }
}

}  // namespace step_input_mode_test
}  // namespace gantry::cli
