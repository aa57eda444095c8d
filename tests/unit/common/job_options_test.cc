#include "common/job_options.h"

#include <catch2/catch.hpp>
#include <csignal>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/derived_resources.h"
#include "common/directive_lexer.h"
#include "common/job_request.h"
#include "tests/unit/support/status_message.h"

namespace gantry {
namespace job_options_test {

using Words = std::vector<std::string>;

using testing::Message;

// One line per request, listing only the fields that were set, so a table
// row states the whole expected outcome.
std::string Describe(const JobRequest& r) {
  std::string out;
  auto add = [&out](const std::string& part) {
    if (!out.empty()) out += " ";
    out += part;
  };
  if (!r.job_name.empty()) add("job_name=" + r.job_name);
  if (r.nodes) add("nodes=" + std::to_string(*r.nodes));
  if (r.min_nodes) add("min_nodes=" + std::to_string(*r.min_nodes));
  if (r.elastic) add("elastic");
  if (r.ntasks) add("ntasks=" + std::to_string(*r.ntasks));
  if (r.ntasks_per_node) {
    add("ntasks_per_node=" + std::to_string(*r.ntasks_per_node));
  }
  if (r.cpus_per_task) add("cpus_per_task=" + std::to_string(*r.cpus_per_task));
  if (r.gpus_per_node) add("gpus_per_node=" + std::to_string(*r.gpus_per_node));
  if (r.mem_per_node_mb) add("mem_mb=" + std::to_string(*r.mem_per_node_mb));
  if (r.time_limit_seconds) {
    add("time_s=" + std::to_string(*r.time_limit_seconds));
  }
  if (!r.partition.empty()) add("partition=" + r.partition);
  if (!r.output.empty()) add("output=" + r.output);
  if (!r.error.empty()) add("error=" + r.error);
  if (!r.chdir.empty()) add("chdir=" + r.chdir);
  if (r.parsable) add("parsable");
  if (r.exclusive) add("exclusive");
  if (!r.gpu_type.empty()) add("gpu_type=" + r.gpu_type);
  if (r.max_switches) add("switches=" + std::to_string(*r.max_switches));
  if (r.switches_max_wait_seconds) {
    add("switches_wait_s=" + std::to_string(*r.switches_max_wait_seconds));
  }
  if (!r.warnings.empty()) add("warnings=" + std::to_string(r.warnings.size()));
  return out;
}

absl::StatusOr<JobRequest> Apply(const Words& words,
                                 const std::string& source = "command line") {
  JobRequest request;
  absl::Status status = ApplyJobOptions(words, source, request);
  if (!status.ok()) return status;
  return request;
}

TEST_CASE("Every option in every form", "[job_options]") {
  struct Case {
    Words words;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"-J", "train"}, "job_name=train"},
      {{"-Jtrain"}, "job_name=train"},
      {{"--job-name=train"}, "job_name=train"},
      {{"--job-name", "my job"}, "job_name=my job"},
      {{"--job-name=a=b"}, "job_name=a=b"},
      {{"-N", "2"}, "nodes=2"},
      {{"-N2"}, "nodes=2"},
      {{"--nodes=2"}, "nodes=2"},
      {{"--nodes", "2"}, "nodes=2"},
      {{"--nodes=02"}, "nodes=2"},
      {{"--nodes=100000"}, "nodes=100000"},
      {{"--nodes=3-3"}, "nodes=3"},
      // A range: nodes is its maximum, min_nodes its minimum (Slurm's
      // -N MIN-MAX; the job gets as many as are free).
      {{"--nodes=2-4"}, "nodes=4 min_nodes=2"},
      {{"-N", "48-64"}, "nodes=64 min_nodes=48"},
      {{"-N1-100000"}, "nodes=100000 min_nodes=1"},
      {{"--nodes=02-04"}, "nodes=4 min_nodes=2"},
      // A later -N replaces a range, and a range a plain count.
      {{"--nodes=2-4", "-N", "3"}, "nodes=3"},
      {{"-N", "3", "--nodes=2-4"}, "nodes=4 min_nodes=2"},
      {{"--nodes=2-4", "--elastic"}, "nodes=4 min_nodes=2 elastic"},
      {{"-n", "8"}, "ntasks=8"},
      {{"-n8"}, "ntasks=8"},
      {{"--ntasks=8"}, "ntasks=8"},
      {{"--ntasks", "10000000"}, "ntasks=10000000"},
      {{"--ntasks-per-node=4"}, "ntasks_per_node=4"},
      {{"--ntasks-per-node", "4"}, "ntasks_per_node=4"},
      {{"-c", "16"}, "cpus_per_task=16"},
      {{"-c16"}, "cpus_per_task=16"},
      {{"--cpus-per-task=4096"}, "cpus_per_task=4096"},
      {{"--gpus-per-node=4"}, "gpus_per_node=4"},
      {{"--gpus-per-node", "64"}, "gpus_per_node=64"},
      {{"--gpus-per-node=a100:2"}, "gpus_per_node=2 gpu_type=a100"},
      {{"--gres=gpu:2"}, "gpus_per_node=2"},
      {{"--gres", "gpu:2"}, "gpus_per_node=2"},
      {{"--gres=gpu"}, "gpus_per_node=1"},
      {{"--gres=gpu:a100"}, "gpus_per_node=1 gpu_type=a100"},
      {{"--gres=gpu:a100:4"}, "gpus_per_node=4 gpu_type=a100"},
      {{"--mem=4G"}, "mem_mb=4096"},
      {{"--mem", "512"}, "mem_mb=512"},
      {{"--mem=0"}, "mem_mb=0"},
      {{"-t", "90"}, "time_s=5400"},
      {{"-t1:00:00"}, "time_s=3600"},
      {{"--time=1-00:00:00"}, "time_s=86400"},
      {{"--time", "UNLIMITED"}, "time_s=0"},  // 0 means no limit
      {{"-p", "gpu"}, "partition=gpu"},
      {{"-pdebug"}, "partition=debug"},
      {{"--partition=debug"}, "partition=debug"},
      {{"-o", "out-%j.log"}, "output=out-%j.log"},
      {{"--output=o.txt"}, "output=o.txt"},
      {{"-e", "err.txt"}, "error=err.txt"},
      {{"--error=e.txt"}, "error=e.txt"},
      {{"-D", "/scratch/run"}, "chdir=/scratch/run"},
      {{"--chdir=/tmp"}, "chdir=/tmp"},
      {{"--parsable"}, "parsable"},
      {{"-N", "2", "-n", "8", "-c", "4", "--mem=1G", "-t", "10", "-J", "x"},
       "job_name=x nodes=2 ntasks=8 cpus_per_task=4 mem_mb=1024 time_s=600"},
      // Later options win over earlier ones.
      {{"-N", "2", "--nodes=5"}, "nodes=5"},
      {{"--gres=gpu:2", "--gpus-per-node=3"}, "gpus_per_node=3"},
      // getopt semantics: a required value is the next word, whatever it is.
      {{"-J", "-dash-name"}, "job_name=-dash-name"},
      {{}, ""},
  };
  for (const Case& c : cases) {
    INFO("words: " << Catch::Detail::stringify(c.words));
    const absl::StatusOr<JobRequest> request = Apply(c.words);
    INFO("status: " << Message(request.status()));
    REQUIRE(request.ok());
    CHECK(Describe(*request) == c.expected);
  }
}

TEST_CASE("The account and QOS are names the job carries, without a warning",
          "[job_options]") {
  for (const Words& words : std::vector<Words>{{"--account=proj", "-q", "high"},
                                               {"-A", "proj", "--qos=high"},
                                               {"-Aproj", "-qhigh"}}) {
    INFO("words: " << Catch::Detail::stringify(words));
    const absl::StatusOr<JobRequest> request = Apply(words);
    REQUIRE(request.ok());
    CHECK(request->warnings.empty());
    CHECK(request->account == "proj");
    CHECK(request->qos == "high");
  }
}

TEST_CASE("Accepted but ignored options warn once each", "[job_options]") {
  const std::vector<Words> cases = {
      {"--mail-type=END"},  {"--mail-type", "ALL"},   {"--mail-user=a@b.c"},
      {"--comment=hello"},  {"--time-min=10"},        {"--overcommit"},
      {"--reservation=r1"}, {"--hint=nomultithread"}, {"--nice"},
      {"--nice=10"},        {"--propagate"},          {"--propagate=STACK"},
      {"--get-user-env"},   {"--get-user-env=10L"},
  };
  for (const Words& words : cases) {
    INFO("words: " << Catch::Detail::stringify(words));
    const absl::StatusOr<JobRequest> request = Apply(words, "#SBATCH line 4");
    INFO("status: " << Message(request.status()));
    REQUIRE(request.ok());
    REQUIRE(request->warnings.size() == 1);
    CHECK_THAT(request->warnings[0],
               Catch::StartsWith("#SBATCH line 4: --") &&
                   Catch::EndsWith("is not supported yet and is ignored"));
    CHECK(request->warnings[0].find('\n') == std::string::npos);
    // Nothing else changes.
    CHECK(Describe(*request) == "warnings=1");
  }
  CHECK(Apply({"--mail-type", "END"})->warnings[0] ==
        "command line: --mail-type=END is not supported yet and is ignored");
  CHECK(Apply({"--nodes=2-4"})->warnings.empty());
}

TEST_CASE("exclusive and switches options reach the request", "[job_options]") {
  struct Case {
    Words words;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"--exclusive"}, "exclusive"},
      {{"--exclusive=user"}, "exclusive warnings=1"},
      {{"--switches=1"}, "switches=1"},
      {{"--switches", "2"}, "switches=2"},
      {{"--switches=2@10"}, "switches=2 switches_wait_s=600"},
      {{"--switches=4@1:30:00"}, "switches=4 switches_wait_s=5400"},
  };
  for (const Case& c : cases) {
    INFO("words: " << Catch::Detail::stringify(c.words));
    const absl::StatusOr<JobRequest> request = Apply(c.words);
    REQUIRE(request.ok());
    CHECK(Describe(*request) == c.expected);
  }
  for (const Words& bad : std::vector<Words>{{"--switches=0"},
                                             {"--switches=x"},
                                             {"--switches=@5"},
                                             {"--switches=2@soon"},
                                             {"--exclusive=everyone"}}) {
    INFO("words: " << Catch::Detail::stringify(bad));
    const absl::StatusOr<JobRequest> request = Apply(bad, "L");
    REQUIRE_FALSE(request.ok());
    CHECK_THAT(std::string(request.status().message()),
               Catch::StartsWith("L: invalid value"));
  }
}

TEST_CASE("the dataset-locality option takes topology or cache",
          "[job_options]") {
  CHECK_FALSE(Apply({})->dataset_locality_cache);
  CHECK(Apply({"--dataset-locality=cache"})->dataset_locality_cache);
  CHECK_FALSE(
      Apply({"--dataset-locality", "topology"})->dataset_locality_cache);
  // The last one wins, as for every option.
  CHECK_FALSE(Apply({"--dataset-locality=cache", "--dataset-locality=topology"})
                  ->dataset_locality_cache);
  const absl::StatusOr<JobRequest> bad =
      Apply({"--dataset-locality=nearby"}, "L");
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()) ==
        "L: invalid value \"nearby\" for --dataset-locality: expected "
        "topology or cache");
}

TEST_CASE(
    "Hold and wrap options reach the request, wrap from the command line only",
    "[job_options]") {
  absl::StatusOr<JobRequest> held = Apply({"-H"});
  REQUIRE(held.ok());
  CHECK(held->hold);
  CHECK(Apply({"--hold"})->hold);
  CHECK_FALSE(Apply({"-N", "1"})->hold);

  absl::StatusOr<JobRequest> wrapped = Apply({"--wrap", "echo a; echo b"});
  REQUIRE(wrapped.ok());
  CHECK(wrapped->wrap == "echo a; echo b");
  CHECK(Apply({"--wrap=python3 train.py --lr 1e-3"})->wrap ==
        "python3 train.py --lr 1e-3");

  const absl::StatusOr<JobRequest> blank = Apply({"--wrap=  "});
  REQUIRE_FALSE(blank.ok());
  CHECK(std::string(blank.status().message()) == "--wrap needs a command");
  CHECK_FALSE(Apply({"--wrap="}).ok());
  JobRequest request;
  const absl::Status in_script =
      ApplyScriptDirectives("#!/bin/bash\n#SBATCH --wrap=true\n", request);
  REQUIRE_FALSE(in_script.ok());
  CHECK_THAT(std::string(in_script.message()),
             Catch::Contains("--wrap belongs on the command line"));
}

TEST_CASE("The version flag (-V, --version) is for the command line only",
          "[job_options]") {
  CHECK(Apply({"--version"})->version);
  CHECK(Apply({"-J", "probe", "-V"})->version);
  CHECK_FALSE(Apply({"-J", "probe"})->version);
  JobRequest request;
  const absl::Status in_script =
      ApplyScriptDirectives("#!/bin/bash\n#SBATCH -V\n", request);
  REQUIRE_FALSE(in_script.ok());
  CHECK_THAT(std::string(in_script.message()),
             Catch::Contains("--version belongs on the command line"));
}

TEST_CASE("Option errors name the source, option and value", "[job_options]") {
  struct Case {
    Words words;
    std::string message;
  };
  const std::string kPositive = "must be a positive integer";
  const std::vector<Case> cases = {
      {{"-N", "-2"}, "L: invalid value \"-2\" for --nodes: " + kPositive},
      {{"--nodes=0"}, "L: invalid value \"0\" for --nodes: " + kPositive},
      {{"--nodes=two"}, "L: invalid value \"two\" for --nodes: " + kPositive},
      {{"--nodes=2x"}, "L: invalid value \"2x\" for --nodes: " + kPositive},
      {{"--nodes= 2"}, "L: invalid value \" 2\" for --nodes: " + kPositive},
      {{"--nodes=+2"}, "L: invalid value \"+2\" for --nodes: " + kPositive},
      {{"--nodes=1.5"}, "L: invalid value \"1.5\" for --nodes: " + kPositive},
      {{"-N=2"}, "L: invalid value \"=2\" for --nodes: " + kPositive},
      {{"--nodes=100001"},
       "L: invalid value \"100001\" for --nodes: must be at most 100000"},
      {{"--nodes=99999999999999999999999"},
       "L: invalid value \"99999999999999999999999\" for --nodes: must be at "
       "most 100000"},
      {{"--nodes=4-2"},
       "L: invalid value \"4-2\" for --nodes: range maximum is below minimum"},
      {{"--nodes=2-x"},
       "L: invalid value \"2-x\" for --nodes: must be a positive integer or a "
       "min-max range such as 2-4"},
      {{"--nodes=2-200000"},
       "L: invalid value \"2-200000\" for --nodes: must be at most 100000"},
      {{"--nodes=0-4"},
       "L: invalid value \"0-4\" for --nodes: must be a positive integer or a "
       "min-max range such as 2-4"},
      {{"--nodes=2-"},
       "L: invalid value \"2-\" for --nodes: must be a positive integer or a "
       "min-max range such as 2-4"},
      {{"--nodes=2-4-6"},
       "L: invalid value \"2-4-6\" for --nodes: must be a positive integer or "
       "a min-max range such as 2-4"},
      {{"--nodes=-4"}, "L: invalid value \"-4\" for --nodes: " + kPositive},
      {{"--nodes=3-2"},
       "L: invalid value \"3-2\" for --nodes: range maximum is below minimum"},
      {{"--ntasks=10000001"},
       "L: invalid value \"10000001\" for --ntasks: must be at most 10000000"},
      {{"-n", "0"}, "L: invalid value \"0\" for --ntasks: " + kPositive},
      {{"--ntasks-per-node=-1"},
       "L: invalid value \"-1\" for --ntasks-per-node: " + kPositive},
      {{"--ntasks-per-node=4097"},
       "L: invalid value \"4097\" for --ntasks-per-node: must be at most "
       "4096"},
      {{"--ntasks-per-gpu=4097"},
       "L: invalid value \"4097\" for --ntasks-per-gpu: must be at most "
       "4096"},
      {{"-c", "4097"},
       "L: invalid value \"4097\" for --cpus-per-task: must be at most 4096"},
      {{"--gpus-per-node=65"},
       "L: invalid value \"65\" for --gpus-per-node: GPU count must be at most "
       "64"},
      {{"--gpus-per-node=0"},
       "L: invalid value \"0\" for --gpus-per-node: GPU count " + kPositive},
      {{"--gpus-per-node=a100:"},
       "L: invalid value \"a100:\" for --gpus-per-node: GPU count " +
           kPositive},
      {{"--gpus-per-node=:2"},
       "L: invalid value \":2\" for --gpus-per-node: GPU type \"\" is not a "
       "valid name"},
      {{"--gres=nic:1"},
       "L: invalid value \"nic:1\" for --gres: unsupported generic resource "
       "\"nic\": only gpu is supported"},
      {{"--gres=gpu:2,mps:100"},
       "L: invalid value \"gpu:2,mps:100\" for --gres: unsupported generic "
       "resource \"mps\": only gpu is supported"},
      {{"--gres=gpu:1,gpu:2"},
       "L: invalid value \"gpu:1,gpu:2\" for --gres: gpu is listed more than "
       "once"},
      {{"--gres=gpu:a:b:c"},
       "L: invalid value \"gpu:a:b:c\" for --gres: expected gpu, gpu:N, "
       "gpu:type or gpu:type:N"},
      {{"--gres=gpu:0"},
       "L: invalid value \"gpu:0\" for --gres: GPU count " + kPositive},
      {{"--gres=gpu:a100:"},
       "L: invalid value \"gpu:a100:\" for --gres: GPU count " + kPositive},
      {{"--gres=,"}, "L: invalid value \",\" for --gres: empty resource name"},
      {{"--mem=16GB"},
       "L: invalid value \"16GB\" for --mem: expected a whole number with an "
       "optional K, M, G or T suffix"},
      {{"--mem=2000T"},
       "L: invalid value \"2000T\" for --mem: more than 1 PiB per node"},
      {{"-t", "1:2:3:4"},
       "L: invalid value \"1:2:3:4\" for --time: expected minutes, "
       "minutes:seconds, hours:minutes:seconds, days-hours, "
       "days-hours:minutes, days-hours:minutes:seconds or UNLIMITED"},
      {{"--time=366-00:00:00"},
       "L: invalid value \"366-00:00:00\" for --time: longer than 365 days"},
      {{"-J", "a\nb"},
       "L: invalid value \"a\\nb\" for --job-name: must not contain control "
       "characters"},
      {{"--nodez=2"}, "L: unknown option --nodez (did you mean --nodes?)"},
      {{"--node", "2"}, "L: unknown option --node (did you mean --nodes?)"},
      {{"--job-nam=x"},
       "L: unknown option --job-nam (did you mean --job-name?)"},
      {{"--patrition=x"},
       "L: unknown option --patrition (did you mean --partition?)"},
      {{"--frobnicate"}, "L: unknown option --frobnicate"},
      {{"--="}, "L: unknown option --"},
      {{"-Z"}, "L: unknown option -Z"},
      {{"-nodes=2"},
       "L: unknown option -nodes=2 (long options take two dashes: --nodes)"},
      {{"--uid=0"},
       "L: --uid is not supported: jobs always run as the submitting user"},
      {{"-N"}, "L: missing value for --nodes"},
      {{"--job-name"}, "L: missing value for --job-name"},
      {{"--job-name="}, "L: empty value for --job-name"},
      {{"-J", ""}, "L: empty value for --job-name"},
      {{"--exclusive="}, "L: empty value for --exclusive"},
      {{"--parsable=yes"}, "L: --parsable takes no value (got \"yes\")"},
      {{"script.sh"},
       "L: unexpected argument \"script.sh\" (expected an option such as "
       "--nodes=2)"},
      {{"-N", "2", "extra"},
       "L: unexpected argument \"extra\" (expected an option such as "
       "--nodes=2)"},
      // Optional values attach only with '='; the next word is positional.
      {{"--exclusive", "user"},
       "L: unexpected argument \"user\" (expected an option such as "
       "--nodes=2)"},
      {{"-"},
       "L: unexpected argument \"-\" (expected an option such as "
       "--nodes=2)"},
      {{"--"},
       "L: unexpected argument \"--\" (expected an option such as "
       "--nodes=2)"},
  };
  for (const Case& c : cases) {
    INFO("words: " << Catch::Detail::stringify(c.words));
    const absl::StatusOr<JobRequest> request = Apply(c.words, "L");
    REQUIRE_FALSE(request.ok());
    CHECK(request.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(Message(request.status()) == c.message);
  }
}

TEST_CASE("Directive words follow sbatch's scan", "[job_options]") {
  struct Case {
    std::string script;
    Words expected;
  };
  const std::vector<Case> cases = {
      {"#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks=4\nsrun x\n",
       {"-N", "2", "--ntasks=4"}},
      {"#SBATCH -N 2\n", {"-N", "2"}},
      {"#GANTRY -N 2\n#SBATCH -n 3\n", {"-N", "2", "-n", "3"}},
      // Comments and blank lines are skipped; the first command stops it.
      {"#!/bin/sh\n\n# a comment\n#SBATCH -N 1\n   \n#SBATCH -n 2\necho hi\n"
       "#SBATCH -c 3\n",
       {"-N", "1", "-n", "2"}},
      {"echo first\n#SBATCH -N 2\n", {}},
      // Not directives: indented, lowercase, no whitespace after keyword.
      {"  #SBATCH -N 2\n#sbatch -N 3\n#SBATCH-N 4\n#SBATCHX -N 5\n#SBATCH -n "
       "1\n",
       {"-n", "1"}},
      {"#SBATCH\n#SBATCH\t-N\t2\n", {"-N", "2"}},
      // Quoting and comments.
      {"#SBATCH -J \"my job\"\n", {"-J", "my job"}},
      {"#SBATCH -J 'it''s'\n", {"-J", "its"}},
      {"#SBATCH -J \"say \\\"hi\\\"\"\n", {"-J", "say \"hi\""}},
      {"#SBATCH -J \"a\\b\"\n", {"-J", "a\\b"}},
      {"#SBATCH -J my\\ job\n", {"-J", "my job"}},
      {"#SBATCH --job-name=\"x y\"\n", {"--job-name=x y"}},
      {"#SBATCH -N 2 # two nodes\n", {"-N", "2"}},
      {"#SBATCH -N 2 #two nodes\n", {"-N", "2"}},
      {"#SBATCH -J a#b\n", {"-J", "a#b"}},
      {"#SBATCH -J \"#x\"\n", {"-J", "#x"}},
      {"#SBATCH -J \"\"\n", {"-J", ""}},
      // CRLF line ends.
      {"#!/bin/bash\r\n#SBATCH -N 2\r\n#SBATCH -n 4\r\n",
       {"-N", "2", "-n", "4"}},
      // "#!" only counts on line 1; later it is a comment.
      {"#SBATCH -N 2\n#!/bin/bash\n#SBATCH -n 4\n", {"-N", "2", "-n", "4"}},
      {"", {}},
      {"#!/bin/bash", {}},
  };
  for (const Case& c : cases) {
    INFO("script: " << c.script);
    const absl::StatusOr<Words> words = ExtractDirectiveWords(c.script);
    INFO("status: " << Message(words.status()));
    REQUIRE(words.ok());
    CHECK(*words == c.expected);
  }
}

TEST_CASE("Unterminated quotes name the line", "[job_options]") {
  struct Case {
    std::string script;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"#!/bin/bash\n#SBATCH -N 2\n#SBATCH -J \"oops\n",
       "#SBATCH line 3: unterminated \" quote"},
      {"#GANTRY -J 'oops\n", "#GANTRY line 1: unterminated ' quote"},
      {"#SBATCH -J \"oops\\\"\n", "#SBATCH line 1: unterminated \" quote"},
  };
  for (const Case& c : cases) {
    INFO("script: " << c.script);
    const absl::StatusOr<Words> words = ExtractDirectiveWords(c.script);
    REQUIRE_FALSE(words.ok());
    CHECK(Message(words.status()) == c.message);
    JobRequest request;
    CHECK(Message(ApplyScriptDirectives(c.script, request)) == c.message);
  }
}

TEST_CASE("Script directives apply with line numbers", "[job_options]") {
  const std::string script =
      "#!/bin/bash\n"
      "#SBATCH --job-name=train\n"
      "#SBATCH -N 2 -n 8\n"
      "#GANTRY --mem=2G\n"
      "\n"
      "#SBATCH --time=1:00:00\n"
      "srun ./train\n";
  JobRequest request;
  REQUIRE(ApplyScriptDirectives(script, request).ok());
  CHECK(Describe(request) ==
        "job_name=train nodes=2 ntasks=8 mem_mb=2048 time_s=3600");

  struct Case {
    std::string script;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"#!/bin/bash\n#SBATCH -J x\n#SBATCH --nodes=-2\n",
       "#SBATCH line 3: invalid value \"-2\" for --nodes: must be a positive "
       "integer"},
      {"#GANTRY --nodez=2\n",
       "#GANTRY line 1: unknown option --nodez (did you mean --nodes?)"},
      // A value never comes from the next line.
      {"#SBATCH -J\n#SBATCH name\n",
       "#SBATCH line 1: missing value for "
       "--job-name"},
      {"#SBATCH job.sh\n",
       "#SBATCH line 1: unexpected argument \"job.sh\" (expected an option "
       "such as --nodes=2)"},
  };
  for (const Case& c : cases) {
    INFO("script: " << c.script);
    JobRequest scratch;
    CHECK(Message(ApplyScriptDirectives(c.script, scratch)) == c.message);
  }

  JobRequest warned;
  REQUIRE(ApplyScriptDirectives("#SBATCH --mail-type=END\n", warned).ok());
  CHECK(warned.warnings ==
        std::vector<std::string>{
            "#SBATCH line 1: --mail-type=END is not supported yet and is "
            "ignored"});
}

TEST_CASE("Command-line options win over directives", "[job_options]") {
  const std::string script =
      "#!/bin/bash\n#SBATCH -N 2\n#SBATCH -J from-script\n#SBATCH -t 10\n"
      "#SBATCH -N 3\n";
  JobRequest request;
  REQUIRE(ApplyScriptDirectives(script, request).ok());
  CHECK(Describe(request) == "job_name=from-script nodes=3 time_s=600");
  REQUIRE(
      ApplyJobOptions({"-N", "8", "--time=5"}, "command line", request).ok());
  CHECK(Describe(request) == "job_name=from-script nodes=8 time_s=300");
}

TEST_CASE("the array option in every form reaches the request",
          "[job_options]") {
  struct Case {
    Words words;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"--array=0-15"}, "0-15"},        {{"--array", "1,3,5-7"}, "1,3,5-7"},
      {{"-a", "0-15:4"}, "0-12:4"},      {{"-a0-99%10"}, "0-99%10"},
      {{"-a", "1", "-a", "2-3"}, "2-3"},
  };
  for (const Case& c : cases) {
    INFO("words: " << Catch::Detail::stringify(c.words));
    const absl::StatusOr<JobRequest> request = Apply(c.words);
    REQUIRE(request.ok());
    CHECK(request->array == c.expected);
  }
  const std::vector<std::pair<Words, std::string>> bad = {
      {{"--array=5-1"},
       "command line: invalid value \"5-1\" for --array: the range \"5-1\" "
       "starts above its end"},
      {{"--array=0-20000"},
       "command line: invalid value \"0-20000\" for --array: \"0-20000\" is "
       "20001 tasks; the limit is 10000"},
      {{"-a", "x"},
       "command line: invalid value \"x\" for --array: \"x\" is not an index "
       "or range: expected indices such as 0-15, 1,3,5-7 or 0-15:4, "
       "optionally followed by %N (at most N tasks running at once)"},
      {{"--array"}, "command line: missing value for --array"},
  };
  for (const auto& [words, message] : bad) {
    INFO("words: " << Catch::Detail::stringify(words));
    const absl::StatusOr<JobRequest> request = Apply(words);
    REQUIRE_FALSE(request.ok());
    CHECK(Message(request.status()) == message);
  }
  JobRequest from_script;
  REQUIRE(
      ApplyScriptDirectives("#!/bin/sh\n#SBATCH --array=1-3%1\n", from_script)
          .ok());
  CHECK(from_script.array == "1-3%1");
}

TEST_CASE("begin, export, requeue, test-only and wait reach the request",
          "[job_options]") {
  JobRequest request;
  REQUIRE(ApplyJobOptions({"--begin=now+1hour", "--export=ALL,FOO=bar",
                           "--no-requeue", "--test-only", "-W"},
                          "command line", request)
              .ok());
  CHECK(request.begin == "now+1hour");
  CHECK(request.export_spec == "ALL,FOO=bar");
  CHECK(request.no_requeue);
  CHECK(request.test_only);
  CHECK(request.wait);
  CHECK(request.warnings.empty());
  JobRequest bad;
  CHECK_FALSE(ApplyJobOptions({"--begin=yesterday"}, "x", bad).ok());
  CHECK_FALSE(ApplyJobOptions({"--export=1BAD"}, "x", bad).ok());
  CHECK_FALSE(ApplyJobOptions({"--export=ALL,NONE"}, "x", bad).ok());
}

TEST_CASE("GPUs and memory per task, per CPU, per GPU become per node",
          "[job_options]") {
  JobRequest request;
  REQUIRE(ApplyJobOptions({"-N", "2", "--ntasks-per-node=4",
                           "--gpus-per-task=2", "--mem-per-gpu=10G"},
                          "command line", request)
              .ok());
  REQUIRE(ResolveDerivedResources(request).ok());
  CHECK(request.gpus_per_node == 8u);
  CHECK(request.mem_per_node_mb == 80u * 1024);

  JobRequest total;
  REQUIRE(ApplyJobOptions({"-N", "2", "--gpus=16", "-c", "2",
                           "--ntasks-per-node=3", "--mem-per-cpu=1000"},
                          "command line", total)
              .ok());
  REQUIRE(ResolveDerivedResources(total).ok());
  CHECK(total.gpus_per_node == 8u);
  CHECK(total.mem_per_node_mb == 6000u);

  JobRequest whole;
  REQUIRE(ApplyJobOptions({"--mem=0"}, "command line", whole).ok());
  REQUIRE(ResolveDerivedResources(whole).ok());
  CHECK(whole.exclusive);
  CHECK_FALSE(whole.mem_per_node_mb.has_value());

  JobRequest clash;
  REQUIRE(ApplyJobOptions({"--mem=1G", "--mem-per-cpu=1G"}, "x", clash).ok());
  CHECK_FALSE(ResolveDerivedResources(clash).ok());
  JobRequest gpu_clash;
  REQUIRE(ApplyJobOptions(
              {"--gpus-per-node=4", "--gpus-per-task=1", "--ntasks-per-node=2"},
              "x", gpu_clash)
              .ok());
  CHECK_FALSE(ResolveDerivedResources(gpu_clash).ok());
  JobRequest no_gpus;
  REQUIRE(ApplyJobOptions({"--mem-per-gpu=1G"}, "x", no_gpus).ok());
  CHECK_FALSE(ResolveDerivedResources(no_gpus).ok());
}

TEST_CASE("A node range after the other options are resolved",
          "[job_options]") {
  struct Case {
    Words words;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"--nodes=2-4"}, "nodes=4 min_nodes=2"},
      // --nodelist: every listed node is in every allocation, so the
      // minimum is at least their count, and a range that reaches the
      // maximum is none.
      {{"--nodes=1-4", "-w", "a1,a2"}, "nodes=4 min_nodes=2"},
      {{"--nodes=2-3", "-w", "a[1-3]"}, "nodes=3"},
      {{"--nodes=1-2", "-w", "a[1-3]"}, "nodes=3 warnings=1"},
      // --elastic means nothing for one size: said so.
      {{"-N", "4", "--elastic"}, "nodes=4 elastic warnings=1"},
      {{"--elastic"}, "elastic warnings=1"},
      {{"--nodes=3-4", "--elastic"}, "nodes=4 min_nodes=3 elastic"},
  };
  for (const Case& c : cases) {
    INFO("words: " << Catch::Detail::stringify(c.words));
    JobRequest request;
    REQUIRE(ApplyJobOptions(c.words, "command line", request).ok());
    REQUIRE(ResolveDerivedResources(request).ok());
    request.nodelist.clear();
    CHECK(Describe(request) == c.expected);
  }
}

TEST_CASE("sbatch --deadline and --export-file are kept for submission",
          "[job_options]") {
  JobRequest request;
  REQUIRE(ApplyJobOptions({"--deadline=now+1hour", "--export-file=env.txt"},
                          "x", request)
              .ok());
  CHECK(request.deadline == "now+1hour");
  CHECK(request.export_file == "env.txt");
  JobRequest bad;
  const absl::Status status = ApplyJobOptions({"--deadline=soon"}, "L", bad);
  REQUIRE_FALSE(status.ok());
  CHECK_THAT(std::string(status.message()),
             Catch::StartsWith("L: invalid value \"soon\" for --deadline"));
}

TEST_CASE("sbatch --gpus without -N goes to gantryd as a total",
          "[job_options]") {
  JobRequest total;
  REQUIRE(ApplyJobOptions({"-G", "8", "--mem-per-gpu=2G"}, "x", total).ok());
  REQUIRE(ResolveDerivedResources(total).ok());
  CHECK(total.gpus_left_to_controller);
  CHECK(total.gpus == 8u);
  CHECK_FALSE(total.nodes.has_value());
  CHECK_FALSE(total.gpus_per_node.has_value());
  CHECK_FALSE(total.mem_per_node_mb.has_value());

  JobRequest typed;
  REQUIRE(ApplyJobOptions({"--gpus=h100:512"}, "x", typed).ok());
  CHECK(typed.gpus == 512u);
  CHECK(typed.gpu_type == "h100");

  JobRequest per_node;
  REQUIRE(
      ApplyJobOptions({"--gpus=8", "--gpus-per-node=4"}, "x", per_node).ok());
  REQUIRE(ResolveDerivedResources(per_node).ok());
  CHECK_FALSE(per_node.gpus_left_to_controller);
  CHECK(per_node.nodes == 2u);
  CHECK(per_node.gpus_per_node == 4u);
  CHECK(per_node.warnings.empty());

  JobRequest uneven;
  REQUIRE(ApplyJobOptions({"-N", "3", "--gpus=8"}, "x", uneven).ok());
  REQUIRE(ResolveDerivedResources(uneven).ok());
  CHECK(uneven.gpus_per_node == 3u);
  REQUIRE(uneven.warnings.size() == 1);
  CHECK(uneven.warnings[0] ==
        "--gpus=8 over 3 node(s): 3 GPU(s) on each node (9 in all)");

  JobRequest too_many;
  CHECK_FALSE(ApplyJobOptions({"--gpus-per-task=65"}, "x", too_many).ok());
  CHECK_FALSE(ApplyJobOptions({"--gpus=262145"}, "x", too_many).ok());
}

TEST_CASE("nodelist, exclude and constraint reach the request",
          "[job_options]") {
  JobRequest request;
  REQUIRE(ApplyJobOptions({"-w", "node[01-02]", "--exclude=node[05-06]", "-x",
                           "node07", "-C", "a100 & ib"},
                          "command line", request)
              .ok());
  CHECK(request.nodelist == std::vector<std::string>{"node01", "node02"});
  CHECK(request.exclude ==
        std::vector<std::string>{"node05", "node06", "node07"});
  CHECK(request.constraint == "a100&ib");
  REQUIRE(ResolveDerivedResources(request).ok());
  CHECK(request.nodes == 2u);  // raised to the listed nodes
  CHECK(request.warnings.empty());

  JobRequest fewer;
  REQUIRE(ApplyJobOptions({"-N", "1", "-w", "n[1-3]"}, "x", fewer).ok());
  REQUIRE(ResolveDerivedResources(fewer).ok());
  CHECK(fewer.nodes == 3u);
  REQUIRE(fewer.warnings.size() == 1);
  CHECK_THAT(fewer.warnings[0], Catch::Contains("raised to 3"));

  JobRequest more;
  REQUIRE(ApplyJobOptions({"-N", "4", "-w", "n[1-2]"}, "x", more).ok());
  REQUIRE(ResolveDerivedResources(more).ok());
  CHECK(more.nodes == 4u);

  JobRequest both;
  REQUIRE(ApplyJobOptions({"-w", "n1", "-x", "n[1-2]"}, "x", both).ok());
  CHECK_THAT(std::string(ResolveDerivedResources(both).message()),
             Catch::Contains("both in --nodelist and in --exclude"));

  JobRequest bad;
  CHECK_FALSE(ApplyJobOptions({"-w", "node[3-1]"}, "x", bad).ok());
  CHECK_FALSE(ApplyJobOptions({"-w", "./hosts.txt"}, "x", bad).ok());
  CHECK_FALSE(ApplyJobOptions({"-C", "a100&"}, "x", bad).ok());
}

TEST_CASE("signal and open-mode reach the request", "[job_options]") {
  JobRequest request;
  REQUIRE(ApplyJobOptions({"--signal=B:USR1@90", "--open-mode=append"},
                          "command line", request)
              .ok());
  CHECK(request.warning_signal == SIGUSR1);
  CHECK(request.warning_signal_seconds == 90u);
  CHECK(request.warning_signal_batch_only);
  CHECK(request.append_output == true);
  CHECK(request.warnings.empty());

  JobRequest plain;
  REQUIRE(ApplyJobOptions({"--signal", "TERM", "--open-mode", "truncate"}, "x",
                          plain)
              .ok());
  CHECK(plain.warning_signal == SIGTERM);
  CHECK(plain.warning_signal_seconds == 60u);  // Slurm's default
  CHECK_FALSE(plain.warning_signal_batch_only);
  CHECK(plain.append_output == false);

  JobRequest numbered;
  REQUIRE(ApplyJobOptions({"--signal=R:10@30"}, "x", numbered).ok());
  CHECK(numbered.warning_signal == 10);
  CHECK_FALSE(numbered.warning_signal_batch_only);

  for (const char* bad :
       {"--signal=USR3", "--signal=X:USR1", "--signal=USR1@",
        "--signal=USR1@70000", "--signal=@10", "--open-mode=overwrite"}) {
    INFO(bad);
    JobRequest refused;
    CHECK_FALSE(ApplyJobOptions({bad}, "x", refused).ok());
  }
}

}  // namespace job_options_test
}  // namespace gantry
