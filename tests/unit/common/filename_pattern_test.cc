// The %-patterns of --output, --error and --input (sbatch's filename
// patterns), expanded for a job and an array task.
#include "common/filename_pattern.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace gantry {
namespace filename_pattern_test {

TEST_CASE("ExpandFilenamePattern expands what it knows", "[filename_pattern]") {
  struct Case {
    std::string pattern;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"slurm-%j.out", "slurm-42.out"},
      {"%x-%j.log", "train-42.log"},
      {"/home/%u/%x/%j", "/home/alice/train/42"},
      {"100%%", "100%"},
      {"%%j", "%j"},
      {"%j%j", "4242"},
      {"no patterns", "no patterns"},
      {"", ""},
      // Left for later expansion per node/task.
      {"out-%N-%t.log", "out-%N-%t.log"},
      // No array task: %A is the job id and %a Slurm's NO_VAL.
      {"out-%A_%a.log", "out-42_4294967294.log"},
      {"%3t", "%3t"},
      // A trailing lone '%' (or '%' and digits) is kept.
      {"out%", "out%"},
      {"out%5", "out%5"},
      {"%", "%"},
      // Zero padding for the job id; ignored for names; capped at 10.
      {"%5j", "00042"},
      {"%1j", "42"},
      {"%05j", "00042"},
      {"%12j", "0000000042"},
      {"%99999999999999999999999j", "0000000042"},
      {"%3x", "train"},
      {"%2u", "alice"},
      {"%5%", "%5%"},
  };
  for (const Case& c : cases) {
    INFO("pattern: " << c.pattern);
    CHECK(ExpandFilenamePattern(c.pattern, 42, "train", "alice") == c.expected);
  }
  CHECK(ExpandFilenamePattern("%j", 18446744073709551615ull, "", "") ==
        "18446744073709551615");
  CHECK(ExpandFilenamePattern("%x.%u", 1, "", "") == ".");
}

TEST_CASE("ExpandFilenamePattern expands array ids", "[filename_pattern]") {
  const ArrayTaskIds task{40, 7};
  CHECK(ExpandFilenamePattern("gantry-%A_%a.out", 47, "sweep", "bob", task) ==
        "gantry-40_7.out");
  CHECK(ExpandFilenamePattern("%j-%A-%a", 47, "", "", task) == "47-40-7");
  CHECK(ExpandFilenamePattern("%4A.%3a.%%a", 47, "", "", task) ==
        "0040.007.%a");
}

}  // namespace filename_pattern_test
}  // namespace gantry
