// Slurm's command names for gantry: when the binary is run through a link
// named sbatch, squeue, scancel or sinfo (the gantry-slurm-compat package
// installs them), the command line is rewritten to the gantry subcommand
// that does the same job, so existing scripts and habits keep working.
//
// Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

namespace gantry::cli {

// `argv` as given to main. Returns it unchanged unless argv[0]'s base name
// is a Slurm command, in which case it returns {"gantry", SUBCOMMAND,
// argv[1]...}: e.g. `squeue -u alice` becomes `gantry queue -u alice`.
std::vector<std::string> ExpandSlurmAlias(const std::vector<std::string>& argv);

}  // namespace gantry::cli
