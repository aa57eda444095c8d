#include "cli/drain_command.h"

#include <iostream>

#include "cli/command_support.h"
#include "cli/controller_client.h"
#include "common/hostlist.h"

namespace gantry::cli {

int RunDrainCommand(const std::string& controller,
                    const std::vector<std::string>& nodes,
                    const std::string& reason, bool resume) {
  const char* command = resume ? "resume" : "drain";
  v1::DrainRequest request;
  for (const std::string& expression : nodes) {
    absl::StatusOr<std::vector<std::string>> names = ExpandHostlist(expression);
    if (!names.ok()) {
      std::cerr << "gantry " << command
                << ": error: " << names.status().message() << "\n";
      return 1;
    }
    for (const std::string& name : *names) request.add_nodes(name);
  }
  request.set_reason(reason);
  request.set_resume(resume);
  request.set_user(CurrentUser());
  ControllerClient client(ResolveControllerTarget(controller));
  v1::DrainResponse response;
  if (absl::Status status = client.Drain(request, response); !status.ok()) {
    return Fail(command, status);
  }
  return 0;
}

}  // namespace gantry::cli
