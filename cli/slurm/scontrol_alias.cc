#include "cli/slurm/scontrol_alias.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/edit_distance.h"

namespace gantry::cli {
namespace {

constexpr char kSupported[] =
    "Gantry's scontrol has show job [ID], show node [NAME], show partition "
    "[NAME], show hostnames LIST, show hostlist NAMES, show config, hold, "
    "uhold, release, requeue, requeuehold, update JobId=.../NodeName=..., "
    "takeover, ping and version";

struct GlobalOptions {
  int details = 0;
  bool one_line = false;
};

// Takes scontrol's global options out of the words, wherever they stand.
absl::StatusOr<std::vector<std::string>> TakeOptions(
    const std::vector<std::string>& argv, GlobalOptions& options,
    std::vector<std::string>& notes) {
  std::vector<std::string> words;
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const std::string& word = argv[i];
    if (word == "--details") {
      ++options.details;
    } else if (word.size() >= 2 && word[0] == '-' && word[1] != '-' &&
               word.find_first_not_of('d', 1) == std::string::npos) {
      options.details += static_cast<int>(word.size() - 1);  // -d, -dd
    } else if (word == "-o" || word == "--oneliner") {
      options.one_line = true;
    } else if (word == "-Q" || word == "--quiet" || word == "-v" ||
               word == "--verbose" || word == "-a" || word == "--all" ||
               word == "--local" || word == "--sibling" ||
               word == "--federation") {
      // Nothing a caller relies on: messages, hidden partitions,
      // federations Gantry does not have.
    } else if (word == "-M" || word == "--clusters" ||
               word.rfind("--clusters=", 0) == 0 ||
               (word.rfind("-M", 0) == 0 && word.size() > 2)) {
      if ((word == "-M" || word == "--clusters") && ++i >= argv.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat(word, " needs a cluster name"));
      }
      notes.push_back(absl::StrCat(
          "warning: ", word.rfind("--", 0) == 0 ? "--clusters" : "-M",
          " ignored: Gantry answers for its one cluster"));
    } else if (word == "--json" || word == "--yaml") {
      return absl::UnimplementedError(
          absl::StrCat(word,
                       " is not supported: use gantry job --json ID or gantry "
                       "nodes --json"));
    } else if (word == "-u" || word == "--uid") {
      return absl::UnimplementedError(
          "-u/--uid is not supported: commands run as the calling user");
    } else if (word == "-V" || word == "--version" || word == "-h" ||
               word == "--help") {
      words.push_back(word);
    } else if (words.empty() && word.size() > 1 && word[0] == '-') {
      // Before the command: an option scontrol does not have.
      const std::string name = word.substr(0, word.find('='));
      std::string closest;
      std::size_t best = 3;
      for (const char* known :
           {"details", "oneliner", "quiet", "verbose", "all", "clusters",
            "local", "sibling", "federation", "json", "yaml", "uid"}) {
        const std::size_t distance =
            EditDistance(name.substr(name.find_first_not_of('-')), known, 2);
        if (distance < best) {
          best = distance;
          closest = known;
        }
      }
      return absl::InvalidArgumentError(absl::StrCat(
          "unrecognized option '", name, "'",
          closest.empty() ? ""
                          : absl::StrCat(" (did you mean '--", closest, "'?)"),
          "; Try \"scontrol --help\" for more information"));
    } else {
      words.push_back(word);
    }
  }
  return words;
}

// The value of ENTITY=VALUE or the next word.
std::vector<std::string> Rest(const std::vector<std::string>& words,
                              std::size_t from) {
  return {words.begin() + static_cast<long>(std::min(from, words.size())),
          words.end()};
}

std::vector<std::string> Values(std::vector<std::string> words) {
  for (std::string& word : words) {
    const std::size_t equals = word.find('=');
    // jobid=12 as scontrol also takes it.
    if (equals != std::string::npos) word = word.substr(equals + 1);
  }
  return words;
}

std::vector<std::string> Concat(std::vector<std::string> head,
                                const std::vector<std::string>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

absl::StatusOr<std::vector<std::string>> ExpandShow(
    std::vector<std::string> words, const GlobalOptions& options) {
  if (words.size() < 2) {
    return absl::InvalidArgumentError(absl::StrCat("show what? ", kSupported));
  }
  std::string entity = absl::AsciiStrToLower(words[1]);
  std::vector<std::string> rest = Rest(words, 2);
  if (const std::size_t equals = entity.find('=');
      equals != std::string::npos) {
    rest.insert(rest.begin(), words[1].substr(equals + 1));
    entity.resize(equals);
  }
  if (entity == "job" || entity == "jobs" || entity == "jobid") {
    std::vector<std::string> job = {"gantry", "job", "--slurm-only"};
    for (int i = 0; i < options.details; ++i) job.push_back("--details");
    if (options.one_line) job.push_back("--oneliner");
    return Concat(job, Values(rest));
  }
  if (entity == "node" || entity == "nodes" || entity == "nodename") {
    if (rest.empty())
      return std::vector<std::string>{"gantry", "nodes", "--detail"};
    return Concat({"gantry", "nodes"}, Values(rest));
  }
  if (entity == "partition" || entity == "partitions" ||
      entity == "partitionname") {
    std::vector<std::string> show = {"gantry", "partitions"};
    if (options.one_line) show.push_back("--oneliner");
    return Concat(show, Values(rest));
  }
  if (entity == "hostnames" || entity == "hostname") {
    return Concat({"gantry", "hostnames"}, rest);
  }
  if (entity == "hostlist") {
    if (rest.empty()) {
      return absl::InvalidArgumentError("show hostlist needs host names");
    }
    if (rest.size() > 1) {
      // scontrol's own words for a second argument.
      return absl::InvalidArgumentError("too many arguments for keyword:show");
    }
    return Concat({"gantry", "hostlist"}, rest);
  }
  if (entity == "config") return std::vector<std::string>{"gantry", "config"};
  return absl::UnimplementedError(absl::StrCat(
      "scontrol show ", words[1], " is not supported: ", kSupported));
}

}  // namespace

bool WantsScontrolHelp(const std::vector<std::string>& argv) {
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& word = argv[i];
    if (word == "-h" || word == "--help" || word == "help") return true;
    if (word.empty() || word[0] != '-') return false;  // the command
  }
  return false;
}

const char* ScontrolUsage() {
  return R"(Usage: scontrol [OPTIONS] COMMAND [ARGS...]     (Gantry; gantry --help)

Show and change jobs, nodes and partitions, as Slurm's scontrol.

Commands:
  show job [ID]              a job's record (every job without ID); also jobid
  show node [NAME]           a node's record (every node without NAME)
  show partition [NAME]      a partition's record
  show hostnames [LIST]      expand a hostlist, one name per line
                             (default: $SLURM_JOB_NODELIST)
  show hostlist NAMES        compress names into a hostlist, in their order
  show config                the controller's address and version
  hold ID...                 keep pending jobs from starting (also uhold)
  release ID...              let held jobs start
  requeue ID...              run jobs again (requeuehold: held once pending)
  update JobId=ID KEY=VALUE  TimeLimit=, Partition= (pending), JobName=
  update NodeName=L State=S  DRAIN, DOWN, FAIL, RESUME or IDLE, with Reason=
  takeover [INDEX|NAME]      the leading controller hands leadership to
                             a standby (the INDEX-th by name, or NAME;
                             default: the most caught-up one); admins only
  ping                       whether the controller answers
  version                    the Slurm version Gantry answers as

Options (anywhere on the line):
  -d, --details              more detail (-dd as -d)
  -o, --oneliner             each record on one line
  -Q, --quiet                no informational messages
  -M, --clusters=NAME        accepted: Gantry serves one cluster
  -h, --help                 print this help
  -V, --version              print the version
)";
}

absl::StatusOr<std::vector<std::string>> ExpandScontrol(
    const std::vector<std::string>& argv, std::vector<std::string>& notes) {
  GlobalOptions options;
  absl::StatusOr<std::vector<std::string>> taken =
      TakeOptions(argv, options, notes);
  if (!taken.ok()) return taken.status();
  std::vector<std::string> words = *std::move(taken);
  if (words.empty() || words[0] == "-h" || words[0] == "--help" ||
      words[0] == "help") {
    return absl::InvalidArgumentError(
        absl::StrCat("no command given: ", kSupported));
  }
  const std::string command = absl::AsciiStrToLower(words[0]);
  if (command == "version" || command == "-v" || command == "-V" ||
      command == "--version") {
    return std::vector<std::string>{"gantry", "version", "--slurm"};
  }
  if (command == "ping") return std::vector<std::string>{"gantry", "ping"};
  if (command == "takeover") {
    // Slurm's INDEX counts backup controllers from 1, as gantry handover
    // counts standbys.
    std::vector<std::string> which = Values(Rest(words, 1));
    if (which.size() > 1) {
      return absl::InvalidArgumentError(
          "scontrol takeover takes one controller index or name at most");
    }
    return Concat({"gantry", "handover"}, which);
  }
  if (command == "show") return ExpandShow(words, options);
  if (command == "hold" || command == "release" || command == "uhold" ||
      command == "requeue" || command == "requeuehold") {
    std::vector<std::string> ids = Values(Rest(words, 1));
    if (ids.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("scontrol ", words[0], " needs a job id"));
    }
    if (command == "requeue" || command == "requeuehold") {
      std::vector<std::string> requeue = {"gantry", "requeue"};
      if (command == "requeuehold") requeue.push_back("--hold");
      return Concat(requeue, ids);
    }
    return Concat({"gantry", command == "release" ? "release" : "hold"}, ids);
  }
  if (command == "update") {
    std::vector<std::string> assignments = Rest(words, 1);
    if (assignments.empty()) {
      return absl::InvalidArgumentError(
          "scontrol update needs JobId=ID or NodeName=NODES and what to "
          "change");
    }
    return Concat({"gantry", "update"}, assignments);
  }
  return absl::UnimplementedError(
      absl::StrCat("scontrol ", words[0], " is not supported: ", kSupported,
                   " (cancel jobs with scancel)"));
}

}  // namespace gantry::cli
