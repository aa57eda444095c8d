#include "cli/hold_command.h"

#include <iostream>

#include "cli/command_support.h"
#include "cli/controller_client.h"
#include "cli/job_selector.h"

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

}  // namespace gantry::cli
