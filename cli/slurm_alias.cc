#include "cli/slurm_alias.h"

#include <map>

namespace gantry::cli {

std::vector<std::string> ExpandSlurmAlias(
    const std::vector<std::string>& argv) {
  // Options differ between the Slurm tools and gantry: only the ones both
  // spell alike carry over (squeue -u, sbatch's whole option set).
  static const std::map<std::string, std::string> kSubcommands = {
      {"sbatch", "batch"},
      {"squeue", "queue"},
      {"scancel", "cancel"},
      {"sinfo", "nodes"},
  };
  if (argv.empty()) return argv;
  const std::string& program = argv[0];
  const size_t slash = program.rfind('/');
  auto found = kSubcommands.find(
      slash == std::string::npos ? program : program.substr(slash + 1));
  if (found == kSubcommands.end()) return argv;
  std::vector<std::string> expanded = {"gantry", found->second};
  expanded.insert(expanded.end(), argv.begin() + 1, argv.end());
  return expanded;
}

}  // namespace gantry::cli
