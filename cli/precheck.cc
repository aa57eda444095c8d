#include "cli/precheck.h"

#include <iostream>
#include <set>

#include "cli/option_check.h"
#include "cli/slurm/foreign_options.h"

namespace gantry::cli {
namespace {

// The parent's options that take a value, which may stand before the
// subcommand's name.
bool GlobalTakesValue(const std::string& word) {
  return word == "--controller" || word == "--tls-ca" ||
         word == "--tls-server-name";
}

}  // namespace

std::optional<int> PrecheckCommandLine(const CLI::App& app,
                                       const std::string& invoked,
                                       std::vector<std::string>& words) {
  std::size_t at = 1;
  while (at < words.size() && words[at].size() > 1 && words[at][0] == '-') {
    at += GlobalTakesValue(words[at]) ? 2 : 1;
  }
  if (at >= words.size()) return std::nullopt;
  const std::string name = words[at];
  const CLI::App* subcommand = nullptr;
  for (const CLI::App* candidate : app.get_subcommands({})) {
    if (candidate->check_name(name)) subcommand = candidate;
  }
  // Unknown subcommands, and those with subcommands of their own, are left
  // to CLI11.
  if (subcommand == nullptr || !subcommand->get_subcommands({}).empty()) {
    return std::nullopt;
  }
  static const std::set<std::string> kSlurmNames = {
      "squeue", "sinfo", "scancel", "scontrol", "sbatch", "srun"};
  const std::string program =
      kSlurmNames.count(invoked) ? invoked : "gantry " + name;
  std::vector<std::string> args(words.begin() + static_cast<long>(at) + 1,
                                words.end());
  std::vector<std::string> warnings;
  absl::StatusOr<std::vector<std::string>> kept =
      TakeForeignOptions(name, args, warnings);
  for (const std::string& warning : warnings) {
    std::cerr << program << ": " << warning << "\n";
  }
  if (!kept.ok()) {
    std::cerr << program << ": error: " << kept.status().message() << "\n";
    return 1;
  }
  for (std::string& word : *kept) {
    if (word == "--usage") word = "--help";
  }
  if (absl::Status checked = CheckOptions(*subcommand, *kept, program);
      !checked.ok()) {
    std::cerr << checked.message() << "\n";
    return 1;
  }
  words.resize(at + 1);
  words.insert(words.end(), kept->begin(), kept->end());
  return std::nullopt;
}

}  // namespace gantry::cli
