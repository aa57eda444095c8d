// `gantry batch` argument splitting and the submission it builds.
#include "cli/commands/batch_command.h"

#include <catch2/catch.hpp>

namespace gantry::cli {
namespace batch_command_test {

TEST_CASE("option values are not mistaken for the script", "[batch]") {
  auto split =
      SplitBatchArguments({"-N", "2", "--job-name", "x", "--parsable", "-c4",
                           "--time=5", "train.sh", "--lr", "0.1"});
  REQUIRE(split.ok());
  CHECK(split->option_words == std::vector<std::string>{"-N", "2", "--job-name",
                                                        "x", "--parsable",
                                                        "-c4", "--time=5"});
  CHECK(split->script_path == "train.sh");
  CHECK(split->script_args == std::vector<std::string>{"--lr", "0.1"});
}

TEST_CASE("a double dash ends the options, no script means stdin", "[batch]") {
  auto split = SplitBatchArguments({"-N", "1", "--", "-odd-name.sh"});
  REQUIRE(split.ok());
  CHECK(split->script_path == "-odd-name.sh");
  split = SplitBatchArguments({"--parsable"});
  REQUIRE(split.ok());
  CHECK(split->script_path.empty());
}

TEST_CASE("the submission carries the request and the environment", "[batch]") {
  JobRequest request;
  request.job_name = "train";
  request.nodes = 2;
  request.ntasks_per_node = 4;
  request.chdir = "runs/a";
  std::string path_entry = "PATH=/usr/bin";
  std::string odd_entry = "WEIRD=a=b";
  char* environment[] = {path_entry.data(), odd_entry.data(), nullptr};
  auto submit = BuildSubmitRequest(request, "#!/bin/bash\necho hi\n", {"x"},
                                   "/home/alice", environment);
  REQUIRE(submit.ok());
  const v1::JobSpec& spec = submit->spec();
  CHECK(spec.name() == "train");
  CHECK(spec.nodes() == 2);
  CHECK(spec.ntasks_per_node() == 4);
  CHECK(spec.working_dir() == "/home/alice/runs/a");
  CHECK(spec.submit_dir() == "/home/alice");
  CHECK(spec.environment().at("PATH") == "/usr/bin");
  CHECK(spec.environment().at("WEIRD") == "a=b");
  CHECK(spec.script_args(0) == "x");
  CHECK_FALSE(submit->user().empty());
}

TEST_CASE("a file that is not a batch script is refused", "[batch]") {
  JobRequest request;
  auto submit = BuildSubmitRequest(request, "echo hi\n", {}, "/tmp", nullptr);
  REQUIRE_FALSE(submit.ok());
  CHECK_THAT(std::string(submit.status().message()),
             Catch::Contains("first line must start with #!"));
}

}  // namespace batch_command_test
}  // namespace gantry::cli
