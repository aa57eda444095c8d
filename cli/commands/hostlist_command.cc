#include "cli/commands/hostlist_command.h"

#include <cstdlib>
#include <iostream>
#include <memory>

#include "absl/strings/str_join.h"
#include "cli/client/command_support.h"
#include "common/hostlist.h"

namespace gantry::cli {

int RunHostlistCommand(const std::vector<std::string>& lists) {
  std::string expression = absl::StrJoin(lists, ",");
  if (lists.empty()) {
    const char* nodelist = std::getenv("SLURM_JOB_NODELIST");
    if (nodelist == nullptr || *nodelist == '\0') {
      std::cerr << "gantry hostlist: error: no host list given and "
                   "SLURM_JOB_NODELIST is not set: give one, e.g. "
                   "gantry hostlist node01,node02,node03\n";
      return 1;
    }
    expression = nodelist;
  }
  absl::StatusOr<std::string> compressed =
      CompressHostlistExpression(expression);
  if (!compressed.ok()) return Fail("hostlist", compressed.status());
  std::cout << *compressed << "\n";
  return 0;
}

void AddHostlistCommand(CommandTable& commands) {
  CLI::App* hostlist = commands.app().add_subcommand(
      "hostlist",
      "Compress host names into a hostlist (scontrol show hostlist)");
  hostlist->prefix_command();
  hostlist->fallthrough(false);
  hostlist->footer("HOSTS: e.g. node01,node02; default: $SLURM_JOB_NODELIST");
  commands.Add(hostlist, [hostlist](const std::string&) {
    return RunHostlistCommand(hostlist->remaining());
  });
}

}  // namespace gantry::cli
