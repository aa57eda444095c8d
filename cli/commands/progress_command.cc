#include "cli/commands/progress_command.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include "absl/strings/numbers.h"
#include "cli/client/command_support.h"
#include "cli/client/controller_client.h"
#include "cli/client/job_selector.h"
#include "common/checkpoint_write_time.h"

namespace gantry::cli {

namespace {

// What `gantry checkpoint` and `gantry progress` parse into (-1: not given).
struct ProgressReport {
  std::string job;
  std::string checkpoint_path;
  int64_t step = -1;
  double step_time = -1;
  int64_t rank = -1;
};

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

void AddProgressCommands(CommandTable& commands) {
  CLI::App* checkpoint = commands.app().add_subcommand(
      "checkpoint",
      "From inside a job: record a completed checkpoint, so a restart "
      "resumes from it (GANTRY_RESUME_FROM)");
  auto report = std::make_shared<ProgressReport>();
  checkpoint->add_option("PATH", report->checkpoint_path, "The checkpoint")
      ->required();
  checkpoint->add_option("--step", report->step, "Training step it holds");
  checkpoint->add_option("--job", report->job,
                         "Job id (default: GANTRY_JOB_ID)");

  CLI::App* progress = commands.app().add_subcommand(
      "progress", "From inside a job: report progress (resets --hang-timeout)");
  progress->add_option("--step", report->step, "Training step reached");
  progress
      ->add_option("--step-time", report->step_time,
                   "Seconds the rank's last step took (its own work, not "
                   "waiting on collectives): for the straggler check")
      ->check(CLI::NonNegativeNumber);
  progress
      ->add_option("--rank", report->rank,
                   "The rank reporting (default: SLURM_PROCID, else RANK, "
                   "when --step is given)")
      ->check(CLI::Range(int64_t{0}, int64_t{0xffffffff}));
  progress->add_option("--job", report->job, "Job id (default: GANTRY_JOB_ID)");
  commands.Add(checkpoint, [report](const std::string& controller) {
    return RunProgressCommand(controller, report->job, report->checkpoint_path,
                              report->step);
  });
  commands.Add(progress, [report](const std::string& controller) {
    return RunProgressCommand(controller, report->job, "", report->step,
                              report->step_time, report->rank);
  });
}

}  // namespace gantry::cli
