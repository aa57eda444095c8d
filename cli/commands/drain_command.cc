#include "cli/commands/drain_command.h"

#include <iostream>
#include <memory>

#include "cli/client/command_support.h"
#include "cli/client/controller_client.h"
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

void AddDrainCommands(CommandTable& commands) {
  CLI::App* drain = commands.app().add_subcommand(
      "drain",
      "Admin: stop placing new work on nodes (scontrol update "
      "state=drain)");
  auto drain_nodes = std::make_shared<std::vector<std::string>>();
  auto reason = std::make_shared<std::string>();
  drain->add_option("NODES", *drain_nodes, "Node names or hostlists")
      ->required();
  drain->add_option("--reason", *reason, "Why (shown in gantry nodes)")
      ->required();
  auto resume_nodes = std::make_shared<std::vector<std::string>>();
  CLI::App* resume = commands.app().add_subcommand(
      "resume", "Admin: let drained nodes take work again");
  resume->add_option("NODES", *resume_nodes, "Node names or hostlists")
      ->required();
  commands.Add(drain, [drain_nodes, reason](const std::string& controller) {
    return RunDrainCommand(controller, *drain_nodes, *reason, false);
  });
  commands.Add(resume, [resume_nodes](const std::string& controller) {
    return RunDrainCommand(controller, *resume_nodes, "", true);
  });
}

}  // namespace gantry::cli
