#include "cli/progress_command.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "absl/strings/numbers.h"
#include "cli/command_support.h"
#include "cli/controller_client.h"
#include "cli/job_selector.h"
#include "common/checkpoint_write_time.h"

namespace gantry::cli {

namespace {

// The rank this process is, from the launcher's variables; -1: none.
int64_t RankFromEnvironment() {
  for (const char* name : {"SLURM_PROCID", "RANK"}) {
    const char* value = std::getenv(name);
    uint32_t rank = 0;
    if (value != nullptr && absl::SimpleAtoi(value, &rank)) return rank;
  }
  return -1;
}

}  // namespace

int RunProgressCommand(const std::string& controller, const std::string& job,
                       const std::string& path, int64_t step,
                       double step_seconds, int64_t rank) {
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
  if (step_seconds >= 0 && step < 0) {
    std::cerr << "gantry " << command
              << ": error: --step-time needs --step (the step it took)\n";
    return 1;
  }
  v1::ReportProgressRequest request;
  request.set_job_id(id);
  request.set_step(step);
  if (step >= 0) {
    if (rank < 0) rank = RankFromEnvironment();
    if (rank >= 0) request.set_rank(static_cast<uint32_t>(rank));
    if (step_seconds > 0) request.set_step_seconds(step_seconds);
  }
  request.set_user(CurrentUser());
  if (!path.empty()) {
    std::error_code error;
    std::filesystem::path absolute = std::filesystem::absolute(path, error);
    request.set_checkpoint_path(absolute.lexically_normal().string());
    // Read as the user who reports it (the CLI runs in the job). A longer
    // span than any one write is left unknown, rather than sent in a report
    // gantryd would refuse.
    if (std::optional<double> seconds =
            CheckpointWriteSeconds(request.checkpoint_path());
        seconds && *seconds <= kMaxCheckpointWriteSeconds) {
      request.set_checkpoint_write_seconds(*seconds);
    }
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
