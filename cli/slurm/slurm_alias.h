// Slurm's command names for gantry: when the binary is run through a link
// named sbatch, squeue, scancel, sinfo or scontrol (the gantry-slurm-compat
// package installs them), the command line is rewritten to the gantry
// subcommand that does the same job, so existing scripts and habits keep
// working. Options are spelled as the Slurm tools spell them: the gantry
// subcommands accept that spelling (squeue -u -j -p -t -o, scancel -u -n -t
// --signal, sinfo -N -p -t -h, sbatch's whole option set).
//
// Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry::cli {

// `argv` as given to main. Returns it unchanged unless argv[0]'s base name
// is a Slurm command, in which case it returns {"gantry", SUBCOMMAND, ...}:
// `squeue -u alice` becomes `gantry queue -u alice`, `scontrol show job 7`
// becomes `gantry job 7`, `scontrol show node n1` `gantry nodes n1`,
// `scontrol show hostnames L` `gantry hostnames L`.
// scontrol's words are mapped by cli/slurm/scontrol_alias.h.
// Errors (the message is ready to print after "NAME: error: "):
// UNIMPLEMENTED for scontrol commands Gantry does not have;
// INVALID_ARGUMENT for a scontrol command line that names no command, or
// misses an argument.
absl::StatusOr<std::vector<std::string>> ExpandSlurmAlias(
    const std::vector<std::string>& argv);
// The same, with `notes` getting lines to print on stderr (options
// accepted without effect).
absl::StatusOr<std::vector<std::string>> ExpandSlurmAlias(
    const std::vector<std::string>& argv, std::vector<std::string>& notes);

}  // namespace gantry::cli
