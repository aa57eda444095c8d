#include "cli/slurm/slurm_alias.h"

#include <map>

#include "cli/slurm/scontrol_alias.h"

namespace gantry::cli {

absl::StatusOr<std::vector<std::string>> ExpandSlurmAlias(
    const std::vector<std::string>& argv) {
  std::vector<std::string> notes;
  return ExpandSlurmAlias(argv, notes);
}

absl::StatusOr<std::vector<std::string>> ExpandSlurmAlias(
    const std::vector<std::string>& argv, std::vector<std::string>& notes) {
  static const std::map<std::string, std::string> kSubcommands = {
      {"sbatch", "batch"},   {"squeue", "queue"}, {"scancel", "cancel"},
      {"sinfo", "nodes"},    {"sacct", "acct"},   {"sstat", "stat"},
      {"sreport", "report"}, {"sprio", "prio"},   {"sshare", "share"},
      {"sdiag", "diag"},
  };
  if (argv.empty()) return argv;
  const std::string& program = argv[0];
  const size_t slash = program.rfind('/');
  const std::string name =
      slash == std::string::npos ? program : program.substr(slash + 1);
  if (name == "scontrol") return ExpandScontrol(argv, notes);
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
  // sinfo -N prints sinfo's columns, not Gantry's inventory table.
  if (name == "sinfo") expanded.push_back("--slurm-layout");
  expanded.insert(expanded.end(), argv.begin() + 1, argv.end());
  return expanded;
}

}  // namespace gantry::cli
