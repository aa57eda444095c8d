#include "cli/steps/step_options.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/edit_distance.h"
#include "common/export_environment.h"
#include "common/hostlist.h"
#include "common/job_options.h"

namespace gantry::cli {
namespace {

enum class Arg { kNone, kRequired, kOptional };

using Setter = std::function<absl::Status(const std::optional<std::string>&,
                                          StepOptions&)>;

// Where an option's words go: the step, the job srun allocates outside a
// job, or both.
enum class Scope { kStep, kBoth };

struct StepOption {
  const char* long_name;
  char short_name;
  Arg arg;
  Setter set;
  Scope scope = Scope::kStep;
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

Setter Text(std::string StepOptions::*field) {
  return
      [field](const std::optional<std::string>& value, StepOptions& options) {
        options.*field = *value;
        return absl::OkStatus();
      };
}

absl::Status SetExport(const std::optional<std::string>& value,
                       StepOptions& options) {
  if (absl::Status valid = CheckExportSpec(*value); !valid.ok()) {
    return Bad("export", *value, std::string(valid.message()));
  }
  options.export_spec = *value;
  return absl::OkStatus();
}

const std::vector<StepOption>& Options() {
  static const std::vector<StepOption> options = {
      {"nodes", 'N', Arg::kRequired, &SetNodes, Scope::kBoth},
      {"ntasks", 'n', Arg::kRequired, Count("ntasks", &StepOptions::ntasks),
       Scope::kBoth},
      {"ntasks-per-node", '\0', Arg::kRequired,
       Count("ntasks-per-node", &StepOptions::ntasks_per_node), Scope::kBoth},
      {"cpus-per-task", 'c', Arg::kRequired,
       Count("cpus-per-task", &StepOptions::cpus_per_task), Scope::kBoth},
      {"gpus-per-task", '\0', Arg::kRequired,
       Count("gpus-per-task", &StepOptions::gpus_per_task), Scope::kBoth},
      {"nodelist", 'w', Arg::kRequired, &SetNodelist, Scope::kBoth},
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
      {"exact", '\0', Arg::kNone, Flag(&StepOptions::exact)},
      {"exclusive", '\0', Arg::kOptional,
       [](const std::optional<std::string>&, StepOptions& options) {
         options.exact = true;  // a step: --exact; a job: whole nodes
         return absl::OkStatus();
       },
       Scope::kBoth},
      {"overlap", '\0', Arg::kNone, Flag(&StepOptions::overlap)},
      {"pty", '\0', Arg::kNone, Flag(&StepOptions::pty)},
      {"output", 'o', Arg::kRequired, Text(&StepOptions::output)},
      {"error", 'e', Arg::kRequired, Text(&StepOptions::error)},
      {"input", 'i', Arg::kRequired, Text(&StepOptions::input)},
      {"export", '\0', Arg::kRequired, &SetExport},
      {"job-name", 'J', Arg::kRequired, Text(&StepOptions::job_name),
       Scope::kBoth},
      {"quiet", 'Q', Arg::kNone, Flag(&StepOptions::quiet)},
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
      {"hint", '\0', Arg::kRequired, &Ignore},
      {"verbose", 'v', Arg::kNone, &Ignore},
  };
  return options;
}

// Pyxis (NVIDIA's container plugin for Slurm) adds these to srun.
constexpr const char* kContainerOptions[] = {
    "container-image",          "container-mounts",
    "container-workdir",        "container-name",
    "container-save",           "container-mount-home",
    "no-container-mount-home",  "container-remap-root",
    "no-container-remap-root",  "container-entrypoint",
    "no-container-entrypoint",  "container-writable",
    "container-readonly",       "container-env",
    "container-entrypoint-log",
};

const StepOption* FindStepLong(const std::string& name) {
  for (const StepOption& option : Options()) {
    if (name == option.long_name) return &option;
  }
  return nullptr;
}

const StepOption* FindStepShort(char name) {
  for (const StepOption& option : Options()) {
    if (option.short_name == name) return &option;
  }
  return nullptr;
}

absl::Status UnknownStepOption(const std::string& word,
                               const std::string& program) {
  const std::string name = word.substr(word.find_first_not_of('-'));
  std::string message = absl::StrCat("unrecognized option '", word, "'");
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
  absl::StrAppend(&message, "; try \"", program, " --help\"");
  return absl::InvalidArgumentError(message);
}

// An option of sbatch's table (common/job_options.h) that srun also takes
// for the job it allocates (-p, -t, --mem, -G, -x, -C, ...): the words it
// spans (1 or 2), or an error when the job table does not know it either.
absl::StatusOr<size_t> JobOptionWords(const std::vector<std::string>& args,
                                      size_t i, const std::string& program) {
  const std::string& word = args[i];
  std::vector<std::string> words = {word};
  if (OptionTakesNextWord(word)) {
    if (i + 1 >= args.size()) {
      return absl::InvalidArgumentError(absl::StrCat(word, " needs a value"));
    }
    words.push_back(args[i + 1]);
  }
  JobRequest scratch;
  absl::Status status = ApplyJobOptions(words, "srun", scratch);
  if (!status.ok() &&
      status.message().find("unknown option") != std::string_view::npos) {
    return UnknownStepOption(word.substr(0, word.find('=')), program);
  }
  if (!status.ok()) {
    // "srun: invalid value ..." reads better without the source.
    std::string message(status.message());
    if (message.rfind("srun: ", 0) == 0) message = message.substr(6);
    return absl::InvalidArgumentError(message);
  }
  return words.size();
}

}  // namespace

bool IsContainerOption(const std::string& long_name) {
  for (const char* name : kContainerOptions) {
    if (long_name == name) return true;
  }
  return false;
}

absl::StatusOr<StepOptions> ParseStepOptions(
    const std::vector<std::string>& args, const std::string& program) {
  StepOptions options;
  size_t i = 0;
  // An option only sbatch's table knows: its words go to the allocation.
  auto take_job_option = [&]() -> absl::Status {
    absl::StatusOr<size_t> spanned = JobOptionWords(args, i, program);
    if (!spanned.ok()) return spanned.status();
    for (size_t k = 0; k < *spanned; ++k) {
      options.allocation_words.push_back(args[i + k]);
    }
    i += *spanned - 1;
    return absl::OkStatus();
  };
  for (; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") {
      ++i;
      break;
    }
    if (word.size() < 2 || word[0] != '-') break;  // the command
    const StepOption* option = nullptr;
    std::optional<std::string> value;
    const size_t first_word = i;
    if (word[1] == '-') {
      const size_t equals = word.find('=');
      const std::string name = word.substr(
          2, equals == std::string::npos ? std::string::npos : equals - 2);
      if (IsContainerOption(name)) {
        return absl::UnimplementedError(absl::StrCat(
            "--", name,
            ": containers (pyxis --container-* options) are not supported by "
            "Gantry; run the command without them (install its software on "
            "the nodes, or start the container runtime yourself in the "
            "command)"));
      }
      option = FindStepLong(name);
      if (option == nullptr) {
        absl::Status taken = take_job_option();
        if (!taken.ok()) return taken;
        continue;
      }
      if (equals != std::string::npos) {
        if (option->arg == Arg::kNone) {
          return absl::InvalidArgumentError(
              absl::StrCat("--", option->long_name, " takes no value"));
        }
        value = word.substr(equals + 1);
      }
    } else {
      option = FindStepShort(word[1]);
      if (option == nullptr) {
        absl::Status taken = take_job_option();
        if (!taken.ok()) return taken;
        continue;
      }
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
    if (option->scope == Scope::kBoth) {
      for (size_t k = first_word; k <= i; ++k) {
        options.allocation_words.push_back(args[k]);
      }
    }
  }
  options.command.assign(args.begin() + static_cast<long>(i), args.end());
  if (options.command.empty() && !options.help && !options.version) {
    return absl::InvalidArgumentError(absl::StrCat(
        "no command given: ", program, " [OPTIONS] COMMAND [ARGS...]"));
  }
  return options;
}

const char* StepUsage() {
  return R"(Usage: gantry run [OPTIONS] COMMAND [ARGS...]     (also: srun)

Run COMMAND as a job step: tasks on the job's nodes, output here, exit
status the highest of the tasks' (128 + signal for a task killed by one).
Inside a job (an sbatch script, a salloc shell, or --jobid) the step runs
on its allocation; without options it takes the whole allocation with the
job's tasks per node. Outside a job, a job is allocated first from the
same options (as srun does: "srun: job N queued and waiting for
resources"), the step runs on it, and the job ends with the step
(COMPLETED, or FAILED with the step's status); Ctrl-C cancels it.

Concurrent steps share the job's CPUs and GPUs: a step holds all of the
job's CPUs on its nodes unless --exact (or --exclusive) limits it to what
its tasks ask for; a step that does not fit waits for the others ("step
creation temporarily disabled, retrying"). --overlap shares everything.

Step options:
  -N, --nodes N             this many of the job's nodes (the first ones)
  -n, --ntasks N            this many tasks, spread over the nodes
      --ntasks-per-node N   tasks on each node
  -c, --cpus-per-task N     CPUs each task needs
      --gpus-per-task N     GPUs each task gets (CUDA_VISIBLE_DEVICES)
  -w, --nodelist HOSTLIST   run on these nodes (node[01-02])
      --exact               hold only the CPUs/GPUs the tasks ask for
      --exclusive           as --exact for a step; whole nodes for a job
      --overlap             share every resource with the other steps
      --pty                 task 0 on a pseudo-terminal (srun --pty bash)
  -o, --output MODE         stdout: all (here), none, TASKID (only that
                            task's), or a file pattern: %j job, %s step,
                            %J job.step, %t task, %n node index, %N node,
                            %u user, %x job name, %% (%4t: zero-padded)
  -e, --error MODE          stderr, as -o
  -i, --input MODE          stdin: all (default: ours to every task,
                            each reads end of file when ours ends), none,
                            TASKID (ours to that task only), a file here
                            sent to every task, or a pattern with %t, %n
                            or %N that each task opens on its node
      --export LIST         ALL (default), NONE, or NAME[=VALUE],... with
                            or without ALL, as sbatch --export
  -J, --job-name NAME       the job's name (outside a job)
  -l, --label               put "TASK: " before each line of output
  -K, --kill-on-bad-exit[=0|1]
                            stop the other tasks when one fails
  -W, --wait SEC            once a task ends, stop the rest after SEC
      --jobid ID            the job to run in (default: $SLURM_JOB_ID)
  -Q, --quiet               no informational messages
  -h, --help                print this help
  -V, --version             print Gantry's version

Job options (outside a job; as sbatch takes them): -p/--partition,
-t/--time, --mem, --mem-per-cpu, -G/--gpus, --gpus-per-node, --gres,
-x/--exclude, -C/--constraint, --exclusive, -d/--dependency, --begin, ...

Accepted for compatibility, no effect: --cpu-bind, -m/--distribution,
--mpi, -u/--unbuffered, --gpu-bind, --hint, -v.
Containers (pyxis --container-image and friends) are not supported.
)";
}

}  // namespace gantry::cli
