#include "cli/commands/job_command.h"

#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/client/command_support.h"
#include "cli/client/controller_client.h"
#include "cli/client/job_selector.h"
#include "cli/slurm/scontrol_records.h"
#include "cli/views/goodput_view.h"
#include "cli/views/json_list.h"
#include "cli/views/output_format.h"
#include "cli/views/preflight_view.h"
#include "cli/views/printable_records.h"
#include "cli/views/straggler_view.h"
#include "common/ids.h"
#include "common/terminal_text.h"

namespace gantry::cli {

namespace {

// scontrol show job with no id: every job of the live state, a blank line
// between records.
int ShowEveryJob(ControllerClient& client, const JobOptions& options) {
  v1::ListJobsRequest request;
  request.set_all(true);
  JobListing jobs_listing;
  JobRecords& jobs = jobs_listing.jobs();
  if (absl::Status status = client.ListAllJobs(request, jobs_listing);
      !status.ok()) {
    return Fail("job", status);
  }
  const int64_t now = NowMs();
  if (options.json) {
    JsonListWriter list(std::cout, "jobs");
    for (v1::JobRecord& job : jobs) {
      MakePrintable(job, OutputKind::kJson);
      list.Add(JobToJson(job, now));
    }
    list.Finish();
    return 0;
  }
  if (jobs.empty()) {
    std::cout << "No jobs in the system\n";
    return 0;
  }
  for (int i = 0; i < jobs.size(); ++i) {
    MakePrintable(jobs[i], OutputKind::kTerminal);
    const std::string record = ScontrolJobRecord(jobs[i], now, options.details);
    if (options.one_line) {
      std::cout << OneLine(record);
    } else {
      std::cout << (i > 0 ? "\n" : "") << record;
    }
  }
  return 0;
}

}  // namespace

int RunJobCommand(const std::string& controller, const JobOptions& options) {
  ControllerClient client(ResolveControllerTarget(controller));
  if (options.job_id.empty()) return ShowEveryJob(client, options);
  const std::optional<JobSelector> selector = ParseJobSelector(options.job_id);
  if (!selector.has_value()) {
    std::cerr << "gantry job: error: invalid job id \"" << options.job_id
              << "\" (expected ID or ARRAYID_TASK)\n";
    return 1;
  }
  // An array task is found by the controller, in its live state or its
  // history.
  v1::GetJobRequest request;
  request.set_job_id(selector->id);
  if (selector->task.has_value()) request.set_array_task_id(*selector->task);
  v1::GetJobResponse response;
  if (absl::Status status = client.GetJob(request, response); !status.ok()) {
    if (status.code() == absl::StatusCode::kNotFound && options.slurm_only) {
      // scontrol's words for a job slurmctld does not know.
      std::cerr << "slurm_load_jobs error: Invalid job id specified\n";
      return 1;
    }
    return Fail("job", status);
  }
  const uint64_t id = response.job().id();
  if (!options.script) {
    MakePrintable(response,
                  options.json ? OutputKind::kJson : OutputKind::kTerminal);
  }
  if (options.script) {
    // The controller sends scripts only to their owners and admins.
    if (response.job().spec().script().empty()) {
      std::cerr << "gantry job: error: the batch script of job " << id
                << " is shown only to its owner and admins\n";
      return 1;
    }
    std::cout << response.job().spec().script();
    return 0;
  }
  nlohmann::json history = nlohmann::json::array();
  for (const v1::EventRecord& event : response.events())
    history.push_back(EventToJson(event));
  if (options.json) {
    nlohmann::json view = JobToJson(response.job(), NowMs());
    view["history"] = history;
    if (response.has_progress()) {
      view["progress"] = JobProgressToJson(response.progress());
    }
    std::cout << view.dump(2) << "\n";
    return 0;
  }
  const v1::JobRecord& job = response.job();
  const std::string record = ScontrolJobRecord(job, NowMs(), options.details);
  std::cout << (options.one_line ? OneLine(record) : record);
  if (options.slurm_only) return 0;
  if (job.spec().min_nodes() > 0) {
    // The size asked for and the size of the current attempt (smaller
    // after a loss with no replacement free).
    std::cout << "   NodeRange=" << job.spec().min_nodes() << "-"
              << job.spec().nodes() << " CurrentNodes=" << job.allocation_size()
              << " Elastic=" << (job.spec().elastic() ? "yes" : "no") << "\n";
  }
  if (!job.spec().checkpoint_dir().empty()) {
    std::cout << "   CheckpointDir=" << job.spec().checkpoint_dir() << "\n";
  }
  if (job.checkpoint_interval_seconds() > 0) {
    std::cout << "   CheckpointInterval="
              << static_cast<int64_t>(job.checkpoint_interval_seconds()) << " ("
              << job.checkpoint_interval_basis() << ")\n";
  }
  for (const v1::DatasetRef& dataset : job.spec().datasets()) {
    std::cout << "   Dataset=" << EscapeForTerminal(dataset.name())
              << (dataset.version_by() == v1::DATASET_VERSION_BY_CONTENT
                      ? ",version=content"
                      : "")
              << ":" << EscapeForTerminal(dataset.path()) << "\n";
  }
  for (const v1::DatasetStaging& staging : job.dataset_staging()) {
    // Bytes staged per node: done/total, and how many came from shared
    // storage (a hit copies none).
    std::cout << "   DatasetStaging=" << EscapeForTerminal(staging.node())
              << ":" << EscapeForTerminal(staging.dataset()) << " "
              << staging.bytes_done() << "/" << staging.bytes_total()
              << " bytes "
              << (!staging.done() ? "staging"
                  : staging.hit() ? "cached"
                                  : "copied")
              << " Copied=" << staging.bytes_copied() << "\n";
  }
  for (const v1::DatasetStagedAhead& ahead : job.staged_ahead()) {
    // A waiting job's datasets already copied to its reserved nodes.
    std::cout << "   StagedAhead=" << EscapeForTerminal(ahead.node()) << ":"
              << EscapeForTerminal(ahead.dataset()) << " "
              << StagedAheadStateName(ahead.state());
    if (ahead.state() == v1::DatasetStagedAhead::DONE) {
      std::cout << " " << ahead.bytes_total()
                << " bytes Copied=" << ahead.bytes_copied();
    } else if (ahead.state() == v1::DatasetStagedAhead::FAILED) {
      std::cout << ": " << EscapeForTerminal(ahead.message());
    }
    std::cout << "\n";
  }
  if (!job.latest_checkpoint().path().empty()) {
    std::cout << "   LatestCheckpoint=" << job.latest_checkpoint().path()
              << " Step=" << job.latest_checkpoint().step()
              << " Source=" << job.latest_checkpoint().source()
              << " At=" << FormatTime(job.latest_checkpoint().time_ms())
              << "\n";
  }
  if (job.spec().memory_checkpoints()) {
    std::cout << "   MemoryCheckpoint="
              << (job.has_memory_checkpoint()
                      ? absl::StrCat(
                            "step ", job.memory_checkpoint().step(), " At=",
                            FormatTime(job.memory_checkpoint().time_ms()))
                      : std::string("none yet"));
    if (job.has_memory_restore_step()) {
      std::cout << " RestoredStep=" << job.memory_restore_step();
    }
    std::cout << "\n";
  }
  if (job.attempts_size() > 0) {
    std::cout << "   Attempts:\n";
    for (const v1::AttemptRecord& attempt : job.attempts()) {
      std::cout << "     #" << attempt.attempt() << "  "
                << absl::StrJoin(attempt.nodes(), ",") << "  "
                << FormatTime(attempt.start_time_ms()) << " -> "
                << (attempt.end_time_ms() ? FormatTime(attempt.end_time_ms())
                                          : "running")
                << (attempt.end_reason().empty() ? ""
                                                 : "  " + attempt.end_reason())
                << (attempt.end_detail().empty()
                        ? ""
                        : " (" + attempt.end_detail() + ")")
                << (attempt.resumed_from().empty()
                        ? ""
                        : "  resumed from " + attempt.resumed_from())
                << "\n"
                << PreflightLines(attempt, NowMs());
    }
  }
  if (response.has_progress()) {
    std::cout << JobProgressText(response.progress(), NowMs());
  }
  if (job.has_goodput()) {
    std::cout << "   Goodput: " << GoodputLine(job.goodput()) << "\n";
  }
  if (job.steps_size() > 0) {
    std::cout << "   Steps:\n";
    for (const v1::StepRecord& step : job.steps()) {
      std::cout << "     " << job.id() << "." << SlurmStepNumber(step.id())
                << "  " << absl::StrJoin(step.argv(), " ").substr(0, 60) << "  "
                << StepTaskCount(step) << " task(s) on "
                << absl::StrJoin(StepNodeNames(step), ",") << "  "
                << (step.end_time_ms()
                        ? absl::StrCat("ExitCode=", step.exit_code())
                        : std::string("running"))
                << (step.end_detail().empty() ? ""
                                              : " (" + step.end_detail() + ")")
                << "\n";
    }
  }
  if (!history.empty()) {
    std::cout << "   History:\n";
    for (const v1::EventRecord& event : response.events()) {
      std::cout << "     " << FormatTime(event.time_ms()) << "  "
                << event.kind()
                << (event.detail().empty() ? "" : "  " + event.detail())
                << "\n";
    }
  }
  return 0;
}

void AddJobCommand(CommandTable& commands) {
  CLI::App* job = commands.app().add_subcommand(
      "job",
      "Show one job and its history (scontrol show job), also long after "
      "it left gantry queue --all (for gantryd's history retention); the "
      "script, its arguments and step command lines only to the job's "
      "owner and admins");
  auto options = std::make_shared<JobOptions>();
  job->add_option("JOBID", options->job_id,
                  "Job id, or ARRAYID_TASK for an array task; none: every "
                  "job in the live state");
  job->add_flag("--json", options->json, "Machine-readable output");
  job->add_flag("--script", options->script,
                "Print the job's batch script (scontrol write batch_script); "
                "only for the job's owner and admins");
  job->add_flag("-d,--details", options->details,
                "Each node's share of the allocation too (scontrol -d)");
  job->add_flag("-o,--oneliner", options->one_line,
                "Each record on one line (scontrol -o)");
  job->add_flag("--slurm-only", options->slurm_only)
      ->group("");  // set when run as scontrol: Slurm's record alone
  commands.Add(job, [options](const std::string& controller) {
    return RunJobCommand(controller, *options);
  });
}

}  // namespace gantry::cli
