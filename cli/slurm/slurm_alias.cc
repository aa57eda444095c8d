#include "cli/slurm/slurm_alias.h"

#include <map>

#include "absl/strings/str_cat.h"

namespace gantry::cli {
namespace {

constexpr char kScontrolUsage[] =
    "gantry answers scontrol show job ID, scontrol show node [NAME], "
    "scontrol show hostnames [HOSTLIST] and scontrol hold|release JOBID...";

// `scontrol [-d|-o|-Q] show ENTITY [ID]` (also ENTITY=ID), `scontrol
// hold|release JOBID...` (also jobid=JOBID).
absl::StatusOr<std::vector<std::string>> ExpandScontrol(
    const std::vector<std::string>& argv) {
  size_t i = 1;
  // Detail, one-line and quiet output change nothing a script relies on.
  while (i < argv.size() &&
         (argv[i] == "-d" || argv[i] == "--details" || argv[i] == "-o" ||
          argv[i] == "--oneliner" || argv[i] == "-Q" || argv[i] == "--quiet")) {
    ++i;
  }
  if (i >= argv.size() || argv[i] == "-h" || argv[i] == "--help") {
    return absl::InvalidArgumentError(
        absl::StrCat("no command given: ", kScontrolUsage));
  }
  if (argv[i] == "hold" || argv[i] == "release" || argv[i] == "uhold") {
    std::vector<std::string> words = {
        "gantry", argv[i] == "release" ? "release" : "hold"};
    for (size_t j = i + 1; j < argv.size(); ++j) {
      const std::string& word = argv[j];
      const size_t equals = word.find('=');
      // jobid=12 as scontrol also takes it.
      words.push_back(equals == std::string::npos ? word
                                                  : word.substr(equals + 1));
    }
    if (words.size() == 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("scontrol ", argv[i], " needs a job id"));
    }
    return words;
  }
  if (argv[i] != "show") {
    return absl::UnimplementedError(absl::StrCat(
        "scontrol ", argv[i], " is not supported: ", kScontrolUsage,
        " (drain nodes with gantry drain, cancel jobs with "
        "scancel)"));
  }
  ++i;
  if (i >= argv.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("show what? ", kScontrolUsage));
  }
  std::string entity = argv[i++];
  std::vector<std::string> rest(argv.begin() + static_cast<long>(i),
                                argv.end());
  if (const size_t equals = entity.find('='); equals != std::string::npos) {
    rest.insert(rest.begin(), entity.substr(equals + 1));
    entity.resize(equals);
  }
  if (entity == "job" || entity == "jobs" || entity == "jobid") {
    if (rest.empty()) {
      return absl::InvalidArgumentError(
          "scontrol show job needs a job id (list jobs with squeue)");
    }
    std::vector<std::string> words = {"gantry", "job"};
    words.insert(words.end(), rest.begin(), rest.end());
    return words;
  }
  if (entity == "node" || entity == "nodes" || entity == "nodename") {
    if (rest.empty())
      return std::vector<std::string>{"gantry", "nodes", "--detail"};
    std::vector<std::string> words = {"gantry", "nodes"};
    words.insert(words.end(), rest.begin(), rest.end());
    return words;
  }
  if (entity == "hostnames" || entity == "hostname") {
    std::vector<std::string> words = {"gantry", "hostnames"};
    words.insert(words.end(), rest.begin(), rest.end());
    return words;
  }
  return absl::UnimplementedError(absl::StrCat(
      "scontrol show ", entity, " is not supported: ", kScontrolUsage));
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ExpandSlurmAlias(
    const std::vector<std::string>& argv) {
  static const std::map<std::string, std::string> kSubcommands = {
      {"sbatch", "batch"},
      {"squeue", "queue"},
      {"scancel", "cancel"},
      {"sinfo", "nodes"},
  };
  if (argv.empty()) return argv;
  const std::string& program = argv[0];
  const size_t slash = program.rfind('/');
  const std::string name =
      slash == std::string::npos ? program : program.substr(slash + 1);
  if (name == "scontrol") return ExpandScontrol(argv);
  if (name == "srun" || name == "salloc" || name == "sattach") {
    std::vector<std::string> expanded = {"gantry", name == "srun" ? "run"
                                                   : name == "salloc"
                                                       ? "alloc"
                                                       : "attach"};
    expanded.insert(expanded.end(), argv.begin() + 1, argv.end());
    return expanded;
  }
  auto found = kSubcommands.find(name);
  if (found == kSubcommands.end()) return argv;
  std::vector<std::string> expanded = {"gantry", found->second};
  expanded.insert(expanded.end(), argv.begin() + 1, argv.end());
  return expanded;
}

}  // namespace gantry::cli
