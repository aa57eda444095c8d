#include "cli/commands/hold_command.h"

#include <iostream>
#include <memory>

#include "cli/client/command_support.h"
#include "cli/client/controller_client.h"
#include "cli/client/job_selector.h"

namespace gantry::cli {

int RunHoldCommand(const std::string& controller,
                   const std::vector<std::string>& job_ids, bool release) {
  const char* command = release ? "release" : "hold";
  absl::StatusOr<std::vector<JobSelector>> selectors =
      ParseJobSelectors(job_ids);
  if (!selectors.ok()) return Fail(command, selectors.status());
  if (selectors->empty()) {
    std::cerr << "gantry " << command << ": error: no job given: name job "
              << "ids (an array's ID: all its pending tasks)\n";
    return 1;
  }
  ControllerClient client(ResolveControllerTarget(controller));
  int code = 0;
  v1::HoldRequest request;
  request.set_user(CurrentUser());
  request.set_release(release);
  AddSelectors(*selectors, *request.mutable_filter());
  v1::HoldResponse response;
  if (absl::Status status = client.Hold(request, response); !status.ok()) {
    return Fail(command, status);
  }
  for (const v1::CancelResult& result : response.results()) {
    if (!result.ok()) {
      std::cerr << "gantry " << command << ": error: " << result.error()
                << "\n";
      code = 1;
    }
  }
  return code;
}

void AddHoldCommands(CommandTable& commands) {
  CLI::App* hold = commands.app().add_subcommand(
      "hold", "Keep pending jobs from starting until released (scontrol hold)");
  auto hold_ids = std::make_shared<std::vector<std::string>>();
  hold->add_option("JOBID", *hold_ids,
                   "Job ids (an array's ID: all its pending tasks; ID_TASK: "
                   "one task)")
      ->required();
  CLI::App* release = commands.app().add_subcommand(
      "release",
      "Let held jobs start: submitted with --hold or held (scontrol release)");
  auto release_ids = std::make_shared<std::vector<std::string>>();
  release
      ->add_option("JOBID", *release_ids,
                   "Job ids (an array's ID: all its pending tasks; ID_TASK: "
                   "one task)")
      ->required();
  commands.Add(hold, [hold_ids](const std::string& controller) {
    return RunHoldCommand(controller, *hold_ids, false);
  });
  commands.Add(release, [release_ids](const std::string& controller) {
    return RunHoldCommand(controller, *release_ids, true);
  });
}

}  // namespace gantry::cli
