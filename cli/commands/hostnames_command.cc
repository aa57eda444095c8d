#include "cli/commands/hostnames_command.h"

#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli/client/command_support.h"
#include "common/hostlist.h"

namespace gantry::cli {

int RunHostnamesCommand(const std::vector<std::string>& hostlists) {
  std::vector<std::string> expressions = hostlists;
  if (expressions.empty()) {
    const char* nodelist = std::getenv("SLURM_JOB_NODELIST");
    if (nodelist == nullptr || *nodelist == '\0') {
      std::cerr << "gantry hostnames: error: no hostlist given and "
                   "SLURM_JOB_NODELIST is not set: give one, e.g. "
                   "gantry hostnames node[01-04]\n";
      return 1;
    }
    expressions.push_back(nodelist);
  }
  for (const std::string& expression : expressions) {
    absl::StatusOr<std::vector<std::string>> names = ExpandHostlist(expression);
    if (!names.ok()) return Fail("hostnames", names.status());
    for (const std::string& name : *names) std::cout << name << "\n";
  }
  return 0;
}

void AddHostnamesCommand(CommandTable& commands) {
  CLI::App* hostnames = commands.app().add_subcommand(
      "hostnames",
      "Expand a hostlist, one name per line (scontrol show hostnames)");
  // Taken raw (prefix_command): CLI11 would split a "[1,3-5]" argument as
  // its own list syntax.
  hostnames->prefix_command();
  hostnames->fallthrough(false);
  hostnames->footer("HOSTLIST: e.g. node[01-04]; default: $SLURM_JOB_NODELIST");
  commands.Add(hostnames, [hostnames](const std::string&) {
    return RunHostnamesCommand(hostnames->remaining());
  });
}

}  // namespace gantry::cli
