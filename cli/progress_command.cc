#include "cli/progress_command.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "cli/command_support.h"
#include "cli/controller_client.h"
#include "cli/job_selector.h"

namespace gantry::cli {

int RunProgressCommand(const std::string& controller, const std::string& job,
                       const std::string& path, int64_t step) {
  const char* command = path.empty() ? "progress" : "checkpoint";
  std::string job_text = job;
  if (job_text.empty()) {
    if (const char* env = std::getenv("GANTRY_JOB_ID")) job_text = env;
  }
  uint64_t id = 0;
  if (!ParseJobId(job_text, id)) {
    std::cerr << "gantry " << command
              << ": error: no job: run it inside a job (GANTRY_JOB_ID) or "
                 "give --job ID\n";
    return 1;
  }
  v1::ReportProgressRequest request;
  request.set_job_id(id);
  request.set_step(step);
  request.set_user(CurrentUser());
  if (!path.empty()) {
    std::error_code error;
    std::filesystem::path absolute = std::filesystem::absolute(path, error);
    request.set_checkpoint_path(absolute.lexically_normal().string());
  }
  ControllerClient client(ResolveControllerTarget(controller));
  v1::ReportProgressResponse response;
  if (absl::Status status = client.ReportProgress(request, response);
      !status.ok()) {
    return Fail(command, status);
  }
  return 0;
}

}  // namespace gantry::cli
