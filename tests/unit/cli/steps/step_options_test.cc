#include "cli/steps/step_options.h"

#include <catch2/catch.hpp>

namespace gantry::cli {
namespace step_options_test {

using Words = std::vector<std::string>;

TEST_CASE("srun options up to the command, in every spelling",
          "[step_options]") {
  absl::StatusOr<StepOptions> options = ParseStepOptions({"-N1",
                                                          "--ntasks",
                                                          "2",
                                                          "--ntasks-per-node=2",
                                                          "-c",
                                                          "4",
                                                          "--gpus-per-task=1",
                                                          "-w",
                                                          "node[01-02]",
                                                          "-l",
                                                          "-K",
                                                          "--wait=5",
                                                          "--jobid",
                                                          "17",
                                                          "--mpi=pmix",
                                                          "--cpu-bind=cores",
                                                          "-u",
                                                          "python3",
                                                          "-u",
                                                          "train.py",
                                                          "--nodes",
                                                          "3"});
  REQUIRE(options.ok());
  CHECK(options->nodes == 1);
  CHECK(options->ntasks == 2);
  CHECK(options->ntasks_per_node == 2);
  CHECK(options->cpus_per_task == 4);
  CHECK(options->gpus_per_task == 1);
  CHECK(options->nodelist == Words{"node01", "node02"});
  CHECK(options->label);
  CHECK(options->kill_on_bad_exit);
  CHECK(options->wait_seconds == 5);
  CHECK(options->job_id == "17");
  // The command's own options stay the command's.
  CHECK(options->command == Words{"python3", "-u", "train.py", "--nodes", "3"});
}

TEST_CASE("a double dash ends the options and N-M takes the lower bound",
          "[step_options]") {
  absl::StatusOr<StepOptions> options =
      ParseStepOptions({"--nodes=2-4", "--", "-weird-command"});
  REQUIRE(options.ok());
  CHECK(options->nodes == 2);
  CHECK(options->command == Words{"-weird-command"});
  absl::StatusOr<StepOptions> off =
      ParseStepOptions({"--kill-on-bad-exit=0", "true"});
  REQUIRE(off.ok());
  CHECK_FALSE(off->kill_on_bad_exit);
}

TEST_CASE("bad srun words say what is wrong", "[step_options]") {
  auto message = [](const Words& words) {
    absl::StatusOr<StepOptions> options = ParseStepOptions(words);
    REQUIRE_FALSE(options.ok());
    return std::string(options.status().message());
  };
  CHECK(message({"--nodez=2", "true"}).find("did you mean --nodes?") !=
        std::string::npos);
  CHECK(message({"-N", "zero", "true"}).find("--nodes=zero") !=
        std::string::npos);
  CHECK(message({"-n", "0", "true"}).find("positive") != std::string::npos);
  CHECK(message({"-w", "node[01-", "true"}).find("--nodelist") !=
        std::string::npos);
  CHECK(message({"-l2", "true"}).find("takes no value") != std::string::npos);
  CHECK(message({"-K2", "true"}).find("expected 0 or 1") != std::string::npos);
  CHECK(message({"--label=yes", "true"}).find("takes no value") !=
        std::string::npos);
  CHECK(message({"-N"}).find("needs a value") != std::string::npos);
  CHECK(message({"-l"}).find("no command") != std::string::npos);
  CHECK(message({}).find("no command") != std::string::npos);
}

TEST_CASE("options that also describe a job are kept for the allocation",
          "[step_options]") {
  absl::StatusOr<StepOptions> options =
      ParseStepOptions({"-N2",      "-n",        "4",       "-p",
                        "gpu",      "--time=10", "-G",      "2",
                        "--mem=1G", "-J",        "train",   "--exclusive",
                        "-l",       "-o",        "out-%t",  "--export=NONE",
                        "--exact",  "--overlap", "python3", "-p",
                        "x"},
                       "srun");
  REQUIRE(options.ok());
  CHECK(options->allocation_words == Words{"-N2", "-n", "4", "-p", "gpu",
                                           "--time=10", "-G", "2", "--mem=1G",
                                           "-J", "train", "--exclusive"});
  CHECK(options->exact);  // --exclusive, for a step
  CHECK(options->overlap);
  CHECK(options->label);
  CHECK(options->job_name == "train");
  CHECK(options->output == "out-%t");
  CHECK(options->export_spec == "NONE");
  CHECK(options->command == Words{"python3", "-p", "x"});
}

TEST_CASE("unknown and container options are refused as Slurm users expect",
          "[step_options]") {
  auto status = [](const Words& words) {
    absl::StatusOr<StepOptions> options = ParseStepOptions(words, "srun");
    REQUIRE_FALSE(options.ok());
    return options.status();
  };
  CHECK(status({"--nodez=2", "true"}).message() ==
        "unrecognized option '--nodez' (did you mean --nodes?); try \"srun "
        "--help\"");
  CHECK(status({"-Z", "true"}).message().find("unrecognized option '-Z'") !=
        std::string::npos);
  const absl::Status container =
      status({"--container-image=nvcr.io/x", "python3"});
  CHECK(absl::IsUnimplemented(container));
  CHECK(container.message().find("containers (pyxis") != std::string::npos);
  CHECK(IsContainerOption("container-mounts"));
  CHECK_FALSE(IsContainerOption("mem"));
  // A job option with a bad value names it; so does a bad --export.
  CHECK(status({"-t", "banana", "true"}).message().find("--time") !=
        std::string::npos);
  CHECK(status({"--export=1X=2", "true"}).message().find("--export") !=
        std::string::npos);
  CHECK(status({"-p"}).message().find("needs a value") != std::string::npos);
}

TEST_CASE("srun --help needs no command", "[step_options]") {
  absl::StatusOr<StepOptions> options = ParseStepOptions({"--help"});
  REQUIRE(options.ok());
  CHECK(options->help);
}

}  // namespace step_options_test
}  // namespace gantry::cli
