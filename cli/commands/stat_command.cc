#include "cli/commands/stat_command.h"

#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/client/command_support.h"
#include "cli/client/controller_client.h"
#include "cli/slurm/sacct_time.h"
#include "cli/slurm/slurm_options.h"
#include "cli/slurm/sstat_format.h"

namespace gantry::cli {
namespace {

constexpr char kSstatHelp[] =
    R"(Usage: sstat -j JOBID[,JOBID...] [OPTIONS]   (also: gantry stat)

CPU time and memory of running jobs, as the agents on their nodes measure
them (the job's cgroup: cpu.stat, memory.current/peak; or the processes'
/proc entries), refreshed with every heartbeat. Gantry measures all of a
job's processes on a node together, so a job has one line, not one per step.

  -j, --jobs LIST         running jobs: ID or ID_TASK
  -o, --format, --fields LIST   JobID, AveCPU, AveRSS, MaxRSS, MaxRSSNode,
                          MinCPU, MinCPUNode, NTasks, TotalCPU
  -n, --noheader          no header lines
  -p, --parsable          "|" after every field; -P, --parsable2: between
  -a, --allsteps          accepted (every process is always counted)
  -e, --helpformat        list the fields
)";

}  // namespace

int RunStatCommand(std::string_view program, const std::string& controller,
                   const std::vector<std::string>& args) {
  static const std::vector<SlurmOption> kOptions = {
      {"jobs", 'j', true},      {"format", 'o', true},
      {"fields", 0, true},      {"noheader", 'n', false},
      {"parsable", 'p', false}, {"parsable2", 'P', false},
      {"allsteps", 'a', false}, {"helpformat", 'e', false},
      {"help", 'h', false},     {"usage", 0, false},
      {"verbose", 'v', false},
  };
  absl::StatusOr<ParsedOptions> parsed =
      ParseSlurmOptions(program, kOptions, args);
  if (!parsed.ok()) {
    std::cerr << parsed.status().message() << "\n";
    return 1;
  }
  const ParsedOptions& options = *parsed;
  if (options.Has("help") || options.Has("usage")) {
    std::cout << kSstatHelp;
    return 0;
  }
  if (options.Has("helpformat")) {
    std::cout << "AveCPU AveRSS JobID MaxRSS MaxRSSNode MinCPU MinCPUNode "
                 "NTasks TotalCPU\n";
    return 0;
  }
  // sstat also takes the ids without -j.
  std::vector<std::string> id_lists = options.Values("jobs");
  id_lists.insert(id_lists.end(), options.positional.begin(),
                  options.positional.end());
  if (id_lists.empty()) {
    return ProgramError(program,
                        absl::InvalidArgumentError(
                            "no job given: sstat -j JOBID (running jobs)"));
  }
  absl::StatusOr<std::vector<SacctJobId>> ids =
      ParseSacctJobIds(absl::StrJoin(id_lists, ","));
  if (!ids.ok()) return ProgramError(program, ids.status());
  std::string format = kSstatDefaultFormat;
  for (const char* flag : {"format", "fields"}) {
    if (options.Has(flag)) format = absl::StrJoin(options.Values(flag), ",");
  }
  absl::StatusOr<std::vector<std::string>> fields = ParseSstatFields(format);
  if (!fields.ok()) return ProgramError(program, fields.status());
  v1::AccountingRequest request;
  for (const SacctJobId& id : *ids) {
    if (!id.step.empty() && id.step != "batch") {
      return ProgramError(
          program,
          absl::InvalidArgumentError(absl::StrCat(
              "Gantry measures a job's processes together, not step by step: "
              "use -j ",
              id.job_id, " (step ", id.step, " is counted in it)")));
    }
    v1::JobSelector& selector = *request.mutable_filter()->add_jobs();
    selector.set_job_id(id.job_id);
    if (id.array_task) selector.set_array_task_id(*id.array_task);
  }
  request.mutable_filter()->add_states(v1::RUNNING);
  request.set_user(CurrentUser());
  JobListing jobs_listing;
  JobRecords& jobs = jobs_listing.jobs();
  ControllerClient client(ResolveControllerTarget(controller));
  if (absl::Status status = client.Accounting(request, jobs_listing);
      !status.ok()) {
    return ProgramError(program, status);
  }
  if (jobs.empty()) {
    return ProgramError(
        program,
        absl::NotFoundError(
            "no running job matches (sstat shows running jobs; sacct finished "
            "ones)"));
  }
  const SacctParsable parsable =
      ParsableFrom(options.Has("parsable"), options.Has("parsable2"));
  std::string out;
  if (!options.Has("noheader")) out += SstatHeader(*fields, parsable);
  for (const v1::JobRecord& job : jobs) {
    out += SstatRow(job, *fields, parsable);
  }
  std::cout << out;
  return 0;
}

}  // namespace gantry::cli
