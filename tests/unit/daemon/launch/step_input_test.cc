#include "daemon/launch/step_input.h"

#include <catch2/catch.hpp>

namespace gantry {
namespace step_input_test {

v1::JobRecord Job() {
  v1::JobRecord job;
  job.set_id(42);
  job.set_user("ada");
  job.mutable_spec()->set_name("train");
  job.add_allocation()->set_node("n1");
  job.add_allocation()->set_node("n2");
  return job;
}

v1::StepRecord Step() {
  v1::StepRecord step;
  step.set_id(3);  // Slurm's step 2
  return step;
}

v1::StepInput Input(v1::StepInput::Mode mode, uint32_t task = 0,
                    std::string pattern = "") {
  v1::StepInput input;
  input.set_mode(mode);
  input.set_task(task);
  input.set_pattern(std::move(pattern));
  return input;
}

TEST_CASE("a step's input mode is checked against its tasks", "[step_input]") {
  const v1::JobRecord job = Job();
  auto check = [&](v1::StepInput::Mode mode, uint32_t task = 0,
                   std::string pattern = "") {
    return CheckStepInput(Input(mode, task, std::move(pattern)), job, 2);
  };
  CHECK(check(v1::StepInput::INPUT_NONE).ok());
  CHECK(check(v1::StepInput::INPUT_ALL_TASKS).ok());
  CHECK(check(v1::StepInput::INPUT_ONE_TASK, 1).ok());
  absl::Status beyond = check(v1::StepInput::INPUT_ONE_TASK, 2);
  CHECK(absl::IsInvalidArgument(beyond));
  CHECK(beyond.message() ==
        "--input=2: the step has no task 2 (its tasks are 0-1)");
  CHECK(check(v1::StepInput::INPUT_FILE_PER_TASK, 0, "in.%t").ok());
  CHECK(absl::IsInvalidArgument(
      check(v1::StepInput::INPUT_FILE_PER_TASK, 0, "")));
  CHECK(absl::IsInvalidArgument(
      check(v1::StepInput::INPUT_FILE_PER_TASK, 0,
            std::string(kMaxStepInputPattern + 1, 'a'))));
  CHECK(absl::IsInvalidArgument(
      check(v1::StepInput::INPUT_FILE_PER_TASK, 0, std::string("a\0b", 3))));
  // Short as given, too long once each %x is the job's name.
  std::string names;
  for (int i = 0; i < 1000; ++i) names += "%x";
  absl::Status expanded =
      check(v1::StepInput::INPUT_FILE_PER_TASK, 0, names + "%t");
  CHECK(absl::IsInvalidArgument(expanded));
  CHECK(expanded.message() ==
        "--input: the file name can become 5010 characters long once "
        "expanded; the limit is 4096");
}

TEST_CASE("each task is told where its stdin comes from", "[step_input]") {
  const v1::JobRecord job = Job();
  const v1::StepRecord step = Step();
  auto told = [&](const v1::StepInput& input, const std::string& node,
                  uint32_t task) {
    v1::RankLaunch rank;
    SetStepTaskInput(input, job, step, node, task, rank);
    return rank;
  };
  v1::RankLaunch none = told(Input(v1::StepInput::INPUT_NONE), "n1", 0);
  CHECK_FALSE(none.stdin_from_caller());
  CHECK(none.stdin_path().empty());
  CHECK(
      told(Input(v1::StepInput::INPUT_ALL_TASKS), "n2", 3).stdin_from_caller());
  CHECK(told(Input(v1::StepInput::INPUT_ONE_TASK, 3), "n2", 3)
            .stdin_from_caller());
  CHECK_FALSE(told(Input(v1::StepInput::INPUT_ONE_TASK, 3), "n1", 0)
                  .stdin_from_caller());
  v1::RankLaunch file = told(
      Input(v1::StepInput::INPUT_FILE_PER_TASK, 0, "in-%j.%s-%2t-%n-%N-%u-%x"),
      "n2", 3);
  CHECK_FALSE(file.stdin_from_caller());
  CHECK(file.stdin_path() == "in-42.2-03-1-n2-ada-train");
}

}  // namespace step_input_test
}  // namespace gantry
