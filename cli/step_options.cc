#include "cli/step_options.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/edit_distance.h"
#include "common/hostlist.h"

namespace gantry::cli {
namespace {

enum class Arg { kNone, kRequired, kOptional };

using Setter = std::function<absl::Status(const std::optional<std::string>&,
                                          StepOptions&)>;

struct StepOption {
  const char* long_name;
  char short_name;
  Arg arg;
  Setter set;
};

absl::Status Bad(const char* option, const std::string& value,
                 const std::string& why) {
  return absl::InvalidArgumentError(
      absl::StrCat("--", option, "=", value, ": ", why));
}

Setter Count(const char* name, uint32_t StepOptions::*field,
             bool allow_zero = false) {
  return [name, field, allow_zero](const std::optional<std::string>& value,
                                   StepOptions& options) {
    uint32_t count = 0;
    if (!absl::SimpleAtoi(*value, &count) || (count == 0 && !allow_zero) ||
        count > 1000000) {
      return Bad(name, *value, "expected a positive whole number");
    }
    options.*field = count;
    return absl::OkStatus();
  };
}

absl::Status SetNodes(const std::optional<std::string>& value,
                      StepOptions& options) {
  // "N" or srun's "MIN-MAX": a step takes the lower bound.
  const std::string first = value->substr(0, value->find('-'));
  uint32_t count = 0;
  if (!absl::SimpleAtoi(first, &count) || count == 0) {
    return Bad("nodes", *value, "expected N or MIN-MAX");
  }
  options.nodes = count;
  return absl::OkStatus();
}

absl::Status SetNodelist(const std::optional<std::string>& value,
                         StepOptions& options) {
  absl::StatusOr<std::vector<std::string>> names = ExpandHostlist(*value);
  if (!names.ok()) {
    return Bad("nodelist", *value, std::string(names.status().message()));
  }
  options.nodelist.insert(options.nodelist.end(), names->begin(), names->end());
  return absl::OkStatus();
}

absl::Status SetKillOnBadExit(const std::optional<std::string>& value,
                              StepOptions& options) {
  if (value && *value != "0" && *value != "1") {
    return Bad("kill-on-bad-exit", *value, "expected 0 or 1");
  }
  options.kill_on_bad_exit = !value || *value == "1";
  return absl::OkStatus();
}

absl::Status Ignore(const std::optional<std::string>&, StepOptions&) {
  return absl::OkStatus();
}

Setter Flag(bool StepOptions::*field) {
  return [field](const std::optional<std::string>&, StepOptions& options) {
    options.*field = true;
    return absl::OkStatus();
  };
}

const std::vector<StepOption>& Options() {
  static const std::vector<StepOption> options = {
      {"nodes", 'N', Arg::kRequired, &SetNodes},
      {"ntasks", 'n', Arg::kRequired, Count("ntasks", &StepOptions::ntasks)},
      {"ntasks-per-node", '\0', Arg::kRequired,
       Count("ntasks-per-node", &StepOptions::ntasks_per_node)},
      {"cpus-per-task", 'c', Arg::kRequired,
       Count("cpus-per-task", &StepOptions::cpus_per_task)},
      {"gpus-per-task", '\0', Arg::kRequired,
       Count("gpus-per-task", &StepOptions::gpus_per_task)},
      {"nodelist", 'w', Arg::kRequired, &SetNodelist},
      {"label", 'l', Arg::kNone, Flag(&StepOptions::label)},
      {"kill-on-bad-exit", 'K', Arg::kOptional, &SetKillOnBadExit},
      {"wait", 'W', Arg::kRequired,
       Count("wait", &StepOptions::wait_seconds, /*allow_zero=*/true)},
      {"jobid", '\0', Arg::kRequired,
       [](const std::optional<std::string>& value, StepOptions& options) {
         uint64_t id = 0;
         if (!absl::SimpleAtoi(*value, &id) || id == 0) {
           return Bad("jobid", *value, "expected a job id");
         }
         options.job_id = *value;
         return absl::OkStatus();
       }},
      {"help", 'h', Arg::kNone, Flag(&StepOptions::help)},
      {"version", 'V', Arg::kNone, Flag(&StepOptions::version)},
      // Placement and binding hints the node's kernel and the framework
      // handle here; accepted so that scripts run unchanged.
      {"cpu-bind", '\0', Arg::kRequired, &Ignore},
      {"cpu_bind", '\0', Arg::kRequired, &Ignore},
      {"gpu-bind", '\0', Arg::kRequired, &Ignore},
      {"distribution", 'm', Arg::kRequired, &Ignore},
      {"mpi", '\0', Arg::kRequired, &Ignore},
      {"unbuffered", 'u', Arg::kNone, &Ignore},
      {"overlap", '\0', Arg::kNone, &Ignore},
      {"exact", '\0', Arg::kNone, &Ignore},
      {"export", '\0', Arg::kRequired, &Ignore},
      {"job-name", 'J', Arg::kRequired, &Ignore},
      {"mem", '\0', Arg::kRequired, &Ignore},
      {"gres", '\0', Arg::kRequired, &Ignore},
      {"gpus-per-node", '\0', Arg::kRequired, &Ignore},
      {"hint", '\0', Arg::kRequired, &Ignore},
      {"quiet", 'Q', Arg::kNone, &Ignore},
      {"verbose", 'v', Arg::kNone, &Ignore},
  };
  return options;
}

const StepOption* FindLong(const std::string& name) {
  for (const StepOption& option : Options()) {
    if (name == option.long_name) return &option;
  }
  return nullptr;
}

const StepOption* FindShort(char name) {
  for (const StepOption& option : Options()) {
    if (option.short_name == name) return &option;
  }
  return nullptr;
}

absl::Status Unknown(const std::string& word) {
  const std::string name = word.substr(word.find_first_not_of('-'));
  std::string message = absl::StrCat("unknown option ", word);
  size_t best_distance = 3;
  const char* best = nullptr;
  for (const StepOption& option : Options()) {
    const size_t distance = EditDistance(name, option.long_name, 2);
    if (distance < best_distance) {
      best_distance = distance;
      best = option.long_name;
    }
  }
  if (best != nullptr)
    absl::StrAppend(&message, " (did you mean --", best, "?)");
  absl::StrAppend(&message, "; gantry run --help lists the options");
  return absl::InvalidArgumentError(message);
}

}  // namespace

absl::StatusOr<StepOptions> ParseStepOptions(
    const std::vector<std::string>& args) {
  StepOptions options;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") {
      ++i;
      break;
    }
    if (word.size() < 2 || word[0] != '-') break;  // the command
    const StepOption* option = nullptr;
    std::optional<std::string> value;
    if (word[1] == '-') {
      const size_t equals = word.find('=');
      option = FindLong(word.substr(
          2, equals == std::string::npos ? std::string::npos : equals - 2));
      if (option == nullptr) {
        return Unknown(word.substr(0, equals));
      }
      if (equals != std::string::npos) {
        if (option->arg == Arg::kNone) {
          return absl::InvalidArgumentError(
              absl::StrCat("--", option->long_name, " takes no value"));
        }
        value = word.substr(equals + 1);
      }
    } else {
      option = FindShort(word[1]);
      if (option == nullptr) return Unknown(word.substr(0, 2));
      if (word.size() > 2) {
        if (option->arg == Arg::kNone) {
          return absl::InvalidArgumentError(absl::StrCat(
              "-", std::string(1, word[1]), " takes no value (in ", word, ")"));
        }
        value = word.substr(2);
      }
    }
    if (option->arg == Arg::kRequired && !value) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", option->long_name, " needs a value"));
      }
      value = args[++i];
    }
    if (absl::Status status = option->set(value, options); !status.ok()) {
      return status;
    }
  }
  options.command.assign(args.begin() + static_cast<long>(i), args.end());
  if (options.command.empty() && !options.help && !options.version) {
    return absl::InvalidArgumentError(
        "no command given: gantry run [OPTIONS] COMMAND [ARGS...]");
  }
  return options;
}

const char* StepUsage() {
  return R"(Usage: gantry run [OPTIONS] COMMAND [ARGS...]

Run COMMAND as a step of the job this runs in (srun inside an sbatch
script): tasks on the job's nodes, output here (in the job's output file
when the script's is), exit status the highest of the tasks' (128 + signal
for a task killed by one). Without options the step takes the whole
allocation with the job's tasks per node. Also answers as srun.

Options:
  -N, --nodes N             this many of the job's nodes (the first ones)
  -n, --ntasks N            this many tasks, spread over the nodes
      --ntasks-per-node N   tasks on each node
  -c, --cpus-per-task N     CPUs each task needs (checked against the job's)
      --gpus-per-task N     GPUs each task gets (CUDA_VISIBLE_DEVICES)
  -w, --nodelist HOSTLIST   run on these nodes of the job (node[01-02])
  -l, --label               put "TASK: " before each line of output
  -K, --kill-on-bad-exit[=0|1]
                            stop the other tasks when one fails
  -W, --wait SEC            once a task ends, stop the rest after SEC
      --jobid ID            the job to run in (default: $SLURM_JOB_ID)
  -h, --help                print this help
  -V, --version             print Gantry's version

Accepted for compatibility, no effect: --cpu-bind, -m/--distribution,
--mpi, -u/--unbuffered, --overlap, --exact, --export, -J, --mem, --gres,
--gpus-per-node, --gpu-bind, --hint, -Q, -v.
)";
}

}  // namespace gantry::cli
