#include "common/step_io_pattern.h"

#include <catch2/catch.hpp>

namespace gantry {
namespace step_io_pattern_test {

StepIoNames Names() {
  StepIoNames names;
  names.job_id = 128;
  names.step_id = 0;
  names.task = 3;
  names.node_index = 1;
  names.node = "gpu07";
  names.user = "ada";
  names.job_name = "train";
  return names;
}

TEST_CASE("srun's filename patterns, as its man page shows them",
          "[step_io_pattern]") {
  CHECK(ExpandStepIoPattern("job%J.out", Names()) == "job128.0.out");
  CHECK(ExpandStepIoPattern("job%4j.out", Names()) == "job0128.out");
  CHECK(ExpandStepIoPattern("job%j-%2t.out", Names()) == "job128-03.out");
  CHECK(ExpandStepIoPattern("%x-%u-%N-%n-%s-%t.log", Names()) ==
        "train-ada-gpu07-1-0-3.log");
  CHECK(ExpandStepIoPattern("100%%-%A-%a", Names()) == "100%-128-4294967294");
  // Unknown sequences and a trailing % stay; padding is capped; \ turns
  // expansion off.
  CHECK(ExpandStepIoPattern("%q-%", Names()) == "%q-%");
  CHECK(ExpandStepIoPattern("%99t", Names()) == "0000000003");
  CHECK(ExpandStepIoPattern("%5N", Names()) == "gpu07");
  CHECK(ExpandStepIoPattern("a\\\\%j", Names()) == "a%j");
}

TEST_CASE("srun output, error and input modes", "[step_io_pattern]") {
  CHECK(ParseStepIoMode("all").kind == StepIoMode::Kind::kAll);
  CHECK(ParseStepIoMode("none").kind == StepIoMode::Kind::kNone);
  StepIoMode task = ParseStepIoMode("12");
  CHECK(task.kind == StepIoMode::Kind::kTask);
  CHECK(task.task == 12);
  StepIoMode file = ParseStepIoMode("out-%t.txt");
  CHECK(file.kind == StepIoMode::Kind::kFile);
  CHECK(file.pattern == "out-%t.txt");
  // Too large to be a task id: a file name.
  CHECK(ParseStepIoMode("99999999999").kind == StepIoMode::Kind::kFile);
}

TEST_CASE("srun input files per task or on srun's host", "[step_io_pattern]") {
  CHECK(StepIoPatternPerTask("in.%t"));
  CHECK(StepIoPatternPerTask("in.%3t"));
  CHECK(StepIoPatternPerTask("%N/in"));
  CHECK(StepIoPatternPerTask("in-%j-%n"));
  CHECK_FALSE(StepIoPatternPerTask("in.txt"));
  CHECK_FALSE(StepIoPatternPerTask("in-%j.%s"));
  CHECK_FALSE(StepIoPatternPerTask("100%%t"));   // a literal "%t"
  CHECK_FALSE(StepIoPatternPerTask("in\\.%t"));  // expansion turned off
  CHECK_FALSE(StepIoPatternPerTask("in.%"));
  CHECK_FALSE(StepIoPatternPerTask("in.%12"));
}

}  // namespace step_io_pattern_test
}  // namespace gantry
