// SBATCH_* input variables, the sbatch options Gantry ignores or refuses,
// and the node count -n implies: the parts of submission that follow Slurm.
#include "common/sbatch_environment.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "common/derived_resources.h"
#include "common/job_options.h"
#include "common/job_request.h"

namespace gantry {
namespace sbatch_environment_test {

using Words = std::vector<std::string>;

std::vector<EnvironmentOption> From(
    const std::map<std::string, std::string>& environment) {
  return SbatchEnvironmentOptions([&](const char* name) -> const char* {
    auto it = environment.find(name);
    return it == environment.end() ? nullptr : it->second.c_str();
  });
}

TEST_CASE("SBATCH_* variables become option words", "[sbatch_environment]") {
  struct Case {
    std::map<std::string, std::string> environment;
    std::vector<Words> expected;
  };
  const std::vector<Case> cases = {
      {{}, {}},
      {{{"SBATCH_PARTITION", "gpu"}}, {{"--partition=gpu"}}},
      {{{"SBATCH_TIMELIMIT", "1:00:00"}}, {{"--time=1:00:00"}}},
      {{{"SBATCH_JOB_NAME", "train"}}, {{"--job-name=train"}}},
      {{{"SBATCH_ACCOUNT", "ml"}}, {{"--account=ml"}}},
      {{{"SBATCH_GPUS", "8"}}, {{"--gpus=8"}}},
      {{{"SBATCH_MEM_PER_NODE", "4G"}}, {{"--mem=4G"}}},
      {{{"SBATCH_OUTPUT", "o-%j"}}, {{"--output=o-%j"}}},
      {{{"SBATCH_EXPORT", "NONE"}}, {{"--export=NONE"}}},
      // Flags: present means set, whatever the value.
      {{{"SBATCH_EXCLUSIVE", ""}}, {{"--exclusive"}}},
      {{{"SBATCH_EXCLUSIVE", "user"}}, {{"--exclusive=user"}}},
      {{{"SBATCH_NO_REQUEUE", ""}}, {{"--no-requeue"}}},
      {{{"SBATCH_WAIT", "yes"}}, {{"--wait"}}},
      // 0/1 variables.
      {{{"SBATCH_DEBUG", "1"}}, {{"--verbose"}}},
      {{{"SBATCH_DEBUG", "0"}}, {}},
      // An empty value is unset for a value option.
      {{{"SBATCH_PARTITION", ""}}, {}},
      // Unrelated variables are not options.
      {{{"SBATCH_NOPE", "x"}, {"PARTITION", "gpu"}}, {}},
      {{{"SBATCH_PARTITION", "gpu"}, {"SBATCH_ACCOUNT", "ml"}},
       {{"--account=ml"}, {"--partition=gpu"}}},
  };
  for (const Case& c : cases) {
    std::vector<Words> got;
    for (const EnvironmentOption& option : From(c.environment)) {
      got.push_back(option.words);
      CHECK(c.environment.count(option.variable) == 1);
    }
    CHECK(got == c.expected);
  }
}

// Directives, then the environment, then the command line: the last wins.
JobRequest Apply(const std::string& script,
                 const std::map<std::string, std::string>& environment,
                 const Words& command_line) {
  JobRequest request;
  REQUIRE(ApplyScriptDirectives(script, request).ok());
  for (const EnvironmentOption& option : From(environment)) {
    REQUIRE(
        ApplyJobOptions(option.words, "environment " + option.variable, request)
            .ok());
  }
  REQUIRE(ApplyJobOptions(command_line, "command line", request).ok());
  return request;
}

TEST_CASE("Slurm's precedence: command line > environment > directives",
          "[sbatch_environment]") {
  const std::string script =
      "#!/bin/bash\n#SBATCH -p batch\n#SBATCH -J fromscript\n#SBATCH -t 5\n";
  struct Case {
    std::map<std::string, std::string> environment;
    Words command_line;
    std::string partition;
    std::string name;
    uint64_t time_seconds;
  };
  const std::vector<Case> cases = {
      {{}, {}, "batch", "fromscript", 300},
      {{{"SBATCH_PARTITION", "gpu"}}, {}, "gpu", "fromscript", 300},
      {{{"SBATCH_PARTITION", "gpu"}}, {"-p", "cli"}, "cli", "fromscript", 300},
      {{{"SBATCH_TIMELIMIT", "10"}, {"SBATCH_JOB_NAME", "env"}},
       {},
       "batch",
       "env",
       600},
      {{{"SBATCH_TIMELIMIT", "10"}},
       {"--time=20"},
       "batch",
       "fromscript",
       1200},
  };
  for (const Case& c : cases) {
    const JobRequest request = Apply(script, c.environment, c.command_line);
    CHECK(request.partition == c.partition);
    CHECK(request.job_name == c.name);
    CHECK(request.time_limit_seconds.value_or(0) == c.time_seconds);
  }
}

TEST_CASE("A bad SBATCH_* value names its variable", "[sbatch_environment]") {
  JobRequest request;
  const std::vector<EnvironmentOption> options =
      From({{"SBATCH_TIMELIMIT", "soon"}});
  REQUIRE(options.size() == 1);
  const absl::Status status = ApplyJobOptions(
      options[0].words, "environment " + options[0].variable, request);
  REQUIRE_FALSE(status.ok());
  CHECK_THAT(std::string(status.message()),
             Catch::Contains("environment SBATCH_TIMELIMIT"));
}

TEST_CASE("Every sbatch option is known: ignored with a reason or refused",
          "[sbatch_environment]") {
  struct Case {
    Words words;
    bool accepted;
    std::string message;  // the warning or the error
  };
  const std::vector<Case> cases = {
      {{"--gpu-bind=closest"}, true, "--gpu-bind is ignored: "},
      {{"--cpus-per-gpu=4"}, true, "--cpus-per-gpu is ignored: "},
      {{"--threads-per-core=1"}, true, "--threads-per-core is ignored"},
      {{"--gres-flags=enforce-binding"}, true, "--gres-flags is ignored"},
      {{"--tmp=10G"}, true, "--tmp is ignored: local disk"},
      {{"--distribution=block"}, true, "--distribution is ignored"},
      {{"-m", "cyclic"}, true, "--distribution is ignored"},
      {{"-s"}, true, "--oversubscribe is ignored: jobs never share"},
      {{"-v"}, true, "--verbose is ignored"},
      {{"-vv"}, true, "--verbose is ignored"},
      {{"--bb=capacity=1G"}, false, "--bb: burst buffers are not supported"},
      {{"--bbf=bb.conf"}, false, "nothing would be staged in or out"},
      {{"--container=/img"}, false, "containers are not supported"},
      {{"--gid=0"}, false, "submitting user's groups"},
  };
  for (const Case& c : cases) {
    INFO("words: " << c.words[0]);
    JobRequest request;
    const absl::Status status =
        ApplyJobOptions(c.words, "command line", request);
    CHECK(status.ok() == c.accepted);
    if (c.accepted) {
      REQUIRE(request.warnings.size() == 1);
      CHECK_THAT(request.warnings[0], Catch::Contains(c.message));
    } else {
      CHECK_THAT(std::string(status.message()), Catch::Contains(c.message));
    }
  }
  JobRequest quiet;
  REQUIRE(ApplyJobOptions({"-Q"}, "command line", quiet).ok());
  CHECK(quiet.quiet);
}

TEST_CASE("sbatch -n with --ntasks-per-node and no -N spreads over nodes",
          "[sbatch_environment]") {
  struct Case {
    Words words;
    uint32_t nodes;  // 0: left to the default (one node)
  };
  const std::vector<Case> cases = {
      {{"-n", "8", "--ntasks-per-node=4"}, 2},
      {{"-n", "9", "--ntasks-per-node=4"}, 3},
      {{"-n", "4", "--ntasks-per-node=4"}, 1},
      {{"-n", "8", "--ntasks-per-node=4", "-N", "3"}, 3},  // -N wins
      {{"-n", "8"}, 0},
      {{"--ntasks-per-node=4"}, 0},
  };
  for (const Case& c : cases) {
    JobRequest request;
    REQUIRE(ApplyJobOptions(c.words, "command line", request).ok());
    REQUIRE(ResolveDerivedResources(request).ok());
    CHECK(request.nodes.value_or(0) == c.nodes);
  }
}

}  // namespace sbatch_environment_test
}  // namespace gantry
