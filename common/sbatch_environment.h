// sbatch's input environment variables (man sbatch, "INPUT ENVIRONMENT
// VARIABLES": SBATCH_ACCOUNT, SBATCH_PARTITION, SBATCH_TIMELIMIT, ...) as
// option words, so that they go through the same option table as the
// directives and the command line. Slurm's precedence: the command line
// wins over the environment, which wins over the script's directives
// (callers apply directives, then these, then the command line).
//
// Pure function, thread-safe.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace gantry {

// One variable that is set, turned into option words ({"--partition=gpu"},
// {"--exclusive"}, ...). `variable` names it for error messages.
struct EnvironmentOption {
  std::string variable;
  std::vector<std::string> words;
};

// The SBATCH_* (and SLURM_HINT / SLURM_CLUSTERS) variables that `lookup`
// finds set, in the man page's order. `lookup` returns nullptr for an unset
// variable (std::getenv fits). An empty value is unset, except for the
// variables that are flags (SBATCH_EXCLUSIVE, SBATCH_REQUEUE, ...): those
// are set by being present; SBATCH_DEBUG and SBATCH_WAIT_ALL_NODES count
// only as "1".
std::vector<EnvironmentOption> SbatchEnvironmentOptions(
    const std::function<const char*(const char*)>& lookup);

}  // namespace gantry
