#include "common/sbatch_environment.h"

#include <string_view>

namespace gantry {
namespace {

enum class Kind {
  kValue,          // --option=VALUE
  kFlag,           // --option when the variable is present
  kOptionalValue,  // --option, or --option=VALUE when it has one
  kOneMeansFlag,   // --option when the value is "1"
};

struct Variable {
  const char* name;
  const char* option;
  Kind kind;
};

// man sbatch (Slurm 22.05), INPUT ENVIRONMENT VARIABLES.
constexpr Variable kVariables[] = {
    {"SBATCH_ACCOUNT", "--account", Kind::kValue},
    {"SBATCH_ACCTG_FREQ", "--acctg-freq", Kind::kValue},
    {"SBATCH_ARRAY_INX", "--array", Kind::kValue},
    {"SBATCH_BATCH", "--batch", Kind::kValue},
    {"SBATCH_CLUSTERS", "--clusters", Kind::kValue},
    {"SLURM_CLUSTERS", "--clusters", Kind::kValue},
    {"SBATCH_CONSTRAINT", "--constraint", Kind::kValue},
    {"SBATCH_CONTAINER", "--container", Kind::kValue},
    {"SBATCH_CORE_SPEC", "--core-spec", Kind::kValue},
    {"SBATCH_CPUS_PER_GPU", "--cpus-per-gpu", Kind::kValue},
    {"SBATCH_DEBUG", "--verbose", Kind::kOneMeansFlag},
    {"SBATCH_DELAY_BOOT", "--delay-boot", Kind::kValue},
    {"SBATCH_DISTRIBUTION", "--distribution", Kind::kValue},
    {"SBATCH_ERROR", "--error", Kind::kValue},
    {"SBATCH_EXCLUSIVE", "--exclusive", Kind::kOptionalValue},
    {"SBATCH_EXPORT", "--export", Kind::kValue},
    {"SBATCH_GET_USER_ENV", "--get-user-env", Kind::kOptionalValue},
    {"SBATCH_GPU_BIND", "--gpu-bind", Kind::kValue},
    {"SBATCH_GPU_FREQ", "--gpu-freq", Kind::kValue},
    {"SBATCH_GPUS", "--gpus", Kind::kValue},
    {"SBATCH_GPUS_PER_NODE", "--gpus-per-node", Kind::kValue},
    {"SBATCH_GPUS_PER_TASK", "--gpus-per-task", Kind::kValue},
    {"SBATCH_GRES", "--gres", Kind::kValue},
    {"SBATCH_GRES_FLAGS", "--gres-flags", Kind::kValue},
    {"SBATCH_HINT", "--hint", Kind::kValue},
    {"SLURM_HINT", "--hint", Kind::kValue},
    {"SBATCH_IGNORE_PBS", "--ignore-pbs", Kind::kFlag},
    {"SBATCH_INPUT", "--input", Kind::kValue},
    {"SBATCH_JOB_NAME", "--job-name", Kind::kValue},
    {"SBATCH_MEM_BIND", "--mem-bind", Kind::kValue},
    {"SBATCH_MEM_PER_CPU", "--mem-per-cpu", Kind::kValue},
    {"SBATCH_MEM_PER_GPU", "--mem-per-gpu", Kind::kValue},
    {"SBATCH_MEM_PER_NODE", "--mem", Kind::kValue},
    {"SBATCH_NETWORK", "--network", Kind::kValue},
    {"SBATCH_NO_KILL", "--no-kill", Kind::kFlag},
    {"SBATCH_NO_REQUEUE", "--no-requeue", Kind::kFlag},
    {"SBATCH_OPEN_MODE", "--open-mode", Kind::kValue},
    {"SBATCH_OUTPUT", "--output", Kind::kValue},
    {"SBATCH_OVERCOMMIT", "--overcommit", Kind::kFlag},
    {"SBATCH_PARTITION", "--partition", Kind::kValue},
    {"SBATCH_POWER", "--power", Kind::kValue},
    {"SBATCH_PROFILE", "--profile", Kind::kValue},
    {"SBATCH_QOS", "--qos", Kind::kValue},
    {"SBATCH_REQ_SWITCH", "--switches", Kind::kValue},
    {"SBATCH_REQUEUE", "--requeue", Kind::kFlag},
    {"SBATCH_RESERVATION", "--reservation", Kind::kValue},
    {"SBATCH_SIGNAL", "--signal", Kind::kValue},
    {"SBATCH_SPREAD_JOB", "--spread-job", Kind::kFlag},
    {"SBATCH_THREAD_SPEC", "--thread-spec", Kind::kValue},
    {"SBATCH_THREADS_PER_CORE", "--threads-per-core", Kind::kValue},
    {"SBATCH_TIMELIMIT", "--time", Kind::kValue},
    {"SBATCH_USE_MIN_NODES", "--use-min-nodes", Kind::kFlag},
    {"SBATCH_WAIT", "--wait", Kind::kFlag},
    {"SBATCH_WAIT_ALL_NODES", "--wait-all-nodes=1", Kind::kOneMeansFlag},
    {"SBATCH_WCKEY", "--wckey", Kind::kValue},
};

}  // namespace

std::vector<EnvironmentOption> SbatchEnvironmentOptions(
    const std::function<const char*(const char*)>& lookup) {
  std::vector<EnvironmentOption> options;
  for (const Variable& variable : kVariables) {
    const char* raw = lookup(variable.name);
    if (raw == nullptr) continue;
    const std::string_view value(raw);
    std::vector<std::string> words;
    switch (variable.kind) {
      case Kind::kValue:
        if (value.empty()) continue;
        words = {std::string(variable.option) + "=" + std::string(value)};
        break;
      case Kind::kFlag:
        words = {variable.option};
        break;
      case Kind::kOptionalValue:
        words = {value.empty()
                     ? std::string(variable.option)
                     : std::string(variable.option) + "=" + std::string(value)};
        break;
      case Kind::kOneMeansFlag:
        if (value != "1") continue;
        words = {variable.option};
        break;
    }
    options.push_back({variable.name, std::move(words)});
  }
  return options;
}

}  // namespace gantry
