#include "cli/hostnames_command.h"

#include <cstdlib>
#include <iostream>

#include "cli/command_support.h"
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

}  // namespace gantry::cli
