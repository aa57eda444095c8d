// Slurm's option grammar for the accounting commands.
#include "cli/slurm/slurm_options.h"

#include <catch2/catch.hpp>

namespace gantry::cli {
namespace slurm_options_test {

const std::vector<SlurmOption> kTable = {
    {"jobs", 'j', true},   {"noheader", 'n', false}, {"parsable2", 'P', false},
    {"format", 'o', true}, {"name", 0, true},
};

TEST_CASE("Slurm options: long, short, bundled, attached values") {
  absl::StatusOr<ParsedOptions> parsed =
      ParseSlurmOptions("sacct", kTable,
                        {"-nP", "--format=JobID,State", "-j", "12", "-j13",
                         "--name", "x", "extra", "--", "-n"});
  REQUIRE(parsed.ok());
  CHECK(parsed->Has("noheader"));
  CHECK(parsed->Has("parsable2"));
  CHECK(parsed->Last("format") == "JobID,State");
  CHECK(parsed->Values("jobs") == std::vector<std::string>{"12", "13"});
  CHECK(parsed->Last("name") == "x");
  CHECK(parsed->positional == std::vector<std::string>{"extra", "-n"});
  absl::StatusOr<ParsedOptions> bundled =
      ParseSlurmOptions("sacct", kTable, {"-no", "JobID"});
  REQUIRE(bundled.ok());
  CHECK(bundled->Last("format") == "JobID");
}

TEST_CASE("Slurm options: unknown ones name the program and the closest") {
  absl::StatusOr<ParsedOptions> parsed =
      ParseSlurmOptions("sacct", kTable, {"--fromat=x"});
  REQUIRE(!parsed.ok());
  CHECK(std::string(parsed.status().message()) ==
        "sacct: unknown option --fromat=x (did you mean --format?); sacct "
        "--help lists the options");
  parsed = ParseSlurmOptions("sprio", kTable, {"-Z"});
  REQUIRE(!parsed.ok());
  CHECK(std::string(parsed.status().message())
            .rfind("sprio: unknown option -Z", 0) == 0);
  parsed = ParseSlurmOptions("sacct", kTable, {"--jobs"});
  REQUIRE(!parsed.ok());
  CHECK(std::string(parsed.status().message()) ==
        "sacct: option --jobs needs a value");
  CHECK(!ParseSlurmOptions("sacct", kTable, {"--noheader=1"}).ok());
}

}  // namespace slurm_options_test
}  // namespace gantry::cli
