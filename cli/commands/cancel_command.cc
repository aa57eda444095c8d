#include "cli/commands/cancel_command.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/client/command_support.h"
#include "cli/client/controller_client.h"
#include "cli/client/job_selector.h"
#include "cli/commands/cancel_selection.h"
#include "cli/slurm/slurm_words.h"
#include "cli/version.h"
#include "cli/views/output_format.h"
#include "cli/views/printable_records.h"
#include "common/hostlist.h"
#include "common/signal_name.h"

namespace gantry::cli {

namespace {

bool FromEnvironment(const char* variable) {
  const char* value = std::getenv(variable);
  return value != nullptr && *value != '\0';
}

// scancel -i, -w, -A, -q: the controller lists the jobs its filter selects,
// the rest is chosen here (and asked about); then exactly those are named.
// Returns the exit code when nothing is left to do.
std::optional<int> ChooseJobs(ControllerClient& client,
                              const CancelOptions& options,
                              const std::set<std::string>& nodes,
                              v1::CancelRequest& request) {
  v1::ListJobsRequest list;
  *list.mutable_filter() = request.filter();
  JobListing jobs_listing;
  JobRecords& jobs = jobs_listing.jobs();
  if (absl::Status status = client.ListAllJobs(list, jobs_listing);
      !status.ok()) {
    return Fail("cancel", status);
  }
  const bool interactive =
      options.interactive || FromEnvironment("SCANCEL_INTERACTIVE");
  request.clear_filter();
  for (v1::JobRecord& job : jobs) {
    if (job.state() != v1::PENDING && job.state() != v1::RUNNING) continue;
    if (!JobOnNodes(job, nodes)) continue;
    if (!options.accounts.empty() &&
        std::find(options.accounts.begin(), options.accounts.end(),
                  job.spec().account()) == options.accounts.end()) {
      continue;
    }
    if (!options.qos.empty() &&
        std::find(options.qos.begin(), options.qos.end(), JobQos(job.spec())) ==
            options.qos.end()) {
      continue;
    }
    MakePrintable(job, OutputKind::kTerminal);
    if (interactive && !ConfirmCancel(job, std::cin, std::cout)) continue;
    v1::JobSelector* selector = request.mutable_filter()->add_jobs();
    selector->set_job_id(job.id());
  }
  if (request.filter().jobs_size() == 0) return 0;
  return std::nullopt;
}

}  // namespace

int RunCancelCommand(const std::string& controller,
                     const CancelOptions& options) {
  absl::StatusOr<std::vector<JobSelector>> ids =
      ParseJobSelectors(options.job_ids);
  if (!ids.ok()) return Fail("cancel", ids.status());
  int signal = 0;
  if (!options.signal.empty()) {
    absl::StatusOr<int> parsed = ParseSignal(options.signal);
    if (!parsed.ok()) return Fail("cancel", parsed.status());
    signal = *parsed;
  }
  if ((options.batch || options.full) && signal == 0) {
    std::cerr << "gantry cancel: error: -b/--batch and -f/--full say where "
                 "a --signal goes; give --signal too\n";
    return 1;
  }
  if (options.batch && options.full) {
    std::cerr << "gantry cancel: error: -b/--batch and -f/--full exclude "
                 "each other\n";
    return 1;
  }
  if (options.quiet && options.verbose > 0) {
    std::cerr << "gantry cancel: error: -Q/--quiet and -v/--verbose exclude "
                 "each other\n";
    return 1;
  }
  std::set<v1::JobState> states;
  if (!options.states.empty()) {
    absl::StatusOr<std::set<v1::JobState>> parsed =
        ParseJobStates(absl::StrJoin(options.states, ","));
    if (!parsed.ok()) return Fail("cancel", parsed.status());
    states = *std::move(parsed);
  }
  std::set<std::string> nodes;
  for (const std::string& expression : options.nodelists) {
    absl::StatusOr<std::vector<std::string>> hosts = ExpandHostlist(expression);
    if (!hosts.ok()) {
      std::cerr << "gantry cancel: error: invalid node list \"" << expression
                << "\": " << hosts.status().message() << "\n";
      return 1;
    }
    nodes.insert(hosts->begin(), hosts->end());
  }
  const std::vector<std::string> user_list = SplitLists(options.users);
  std::set<std::string> users(user_list.begin(), user_list.end());
  if (options.me) users.insert(CurrentUser());
  const std::vector<std::string> name_list = SplitLists(options.names);
  const std::set<std::string> names(name_list.begin(), name_list.end());
  const std::vector<std::string> partition_list =
      SplitLists(options.partitions);
  const std::set<std::string> partitions(partition_list.begin(),
                                         partition_list.end());
  const bool client_side = !nodes.empty() || !options.accounts.empty() ||
                           !options.qos.empty() || options.interactive ||
                           FromEnvironment("SCANCEL_INTERACTIVE");
  const bool filtered = !users.empty() || !names.empty() || !states.empty() ||
                        !partitions.empty() || !nodes.empty() ||
                        !options.accounts.empty() || !options.qos.empty();
  if (ids->empty() && !filtered) {
    std::cerr << "gantry cancel: error: no job given: name job ids, or "
                 "select jobs with -u USER, --me, -n NAME, -p PARTITION, -w "
                 "NODES or -t STATE (all of yours: gantry cancel --me)\n";
    return 1;
  }
  ControllerClient client(ResolveControllerTarget(controller));
  v1::CancelRequest request;
  request.set_user(CurrentUser());
  request.set_signal(signal);
  request.set_signal_target(options.batch
                                ? v1::CancelRequest::SIGNAL_BATCH_SCRIPT
                            : options.full ? v1::CancelRequest::SIGNAL_FULL
                                           : v1::CancelRequest::SIGNAL_STEPS);
  // The controller resolves the selection (CancelRequest.filter): an
  // array's id stands for its pending and running tasks; with -u, -n, -p
  // or -t, the pending and running jobs matching all of them (none
  // matching is no error for scancel).
  v1::JobFilter& filter = *request.mutable_filter();
  AddSelectors(*ids, filter);
  if (filtered) {
    // With no ids, the caller's own jobs unless -u says whose; the
    // controller still refuses jobs the caller may not manage.
    if (ids->empty() && users.empty()) users.insert(CurrentUser());
    AddAll(users, *filter.mutable_users());
    AddAll(names, *filter.mutable_names());
    AddAll(partitions, *filter.mutable_partitions());
    for (v1::JobState state : states) filter.add_states(state);
  }
  if (client_side) {
    if (std::optional<int> done = ChooseJobs(client, options, nodes, request))
      return *done;
  }
  v1::CancelResponse response;
  if (absl::Status status = client.Cancel(request, response); !status.ok()) {
    return Fail("cancel", status);
  }
  const bool verbose =
      options.verbose > 0 || FromEnvironment("SCANCEL_VERBOSE");
  int code = 0;
  for (const v1::CancelResult& result : response.results()) {
    const std::string id = result.selector().empty()
                               ? absl::StrCat(result.job_id())
                               : result.selector();
    if (result.ok()) {
      // scancel -v's lines.
      if (verbose && signal) {
        std::cerr << "scancel: Signal " << signal << " to job " << id << "\n";
      } else if (verbose) {
        std::cerr << "scancel: Terminating job " << id << "\n";
      }
      continue;
    }
    if (options.quiet) continue;
    std::cerr << "gantry cancel: error: " << (signal ? "Signal" : "Kill")
              << " job error on job id " << id << ": " << result.error()
              << "\n";
    code = 1;
  }
  return code;
}

void AddCancelCommand(CommandTable& commands) {
  CLI::App* cancel = commands.app().add_subcommand(
      "cancel", "Cancel jobs, or signal them with --signal (scancel)");
  auto options = std::make_shared<CancelOptions>();
  cancel->add_option("JOBID", options->job_ids,
                     "Job ids (an array's ID: all its tasks; ID_TASK: one "
                     "task); none: every job the filters select");
  cancel
      ->add_option("-u,--user", options->users,
                   "Only these users' jobs (with no ids: all of them; "
                   "default without ids: yours)")
      ->allow_extra_args(false);
  cancel
      ->add_option("-n,--name,--jobname", options->names,
                   "Only jobs with this name")
      ->allow_extra_args(false);
  cancel
      ->add_option("-t,--state", options->states,
                   "Only jobs in these states (PD, R, or long names)")
      ->allow_extra_args(false);
  cancel->add_option("-s,--signal", options->signal,
                     "Send this signal (USR1, SIGTERM, 10, ...) to the "
                     "running tasks instead of cancelling: the step tasks "
                     "(gantry run), or every task of a --per-task job");
  cancel->add_flag("-b,--batch", options->batch,
                   "With --signal: to the batch script alone");
  cancel->add_flag("-f,--full", options->full,
                   "With --signal: to the batch script, what it started and "
                   "the step tasks");
  cancel->add_flag("--me", options->me, "Only your jobs");
  cancel
      ->add_option("-p,--partition", options->partitions,
                   "Only jobs in these partitions")
      ->allow_extra_args(false);
  cancel
      ->add_option("-w,--nodelist", options->nodelists,
                   "Only jobs on these nodes (a hostlist)")
      ->allow_extra_args(false);
  cancel
      ->add_option("-A,--account", options->accounts,
                   "Only jobs of these accounts")
      ->allow_extra_args(false);
  cancel
      ->add_option("-q,--qos", options->qos,
                   "Only jobs of these QOS (a job that names none has normal)")
      ->allow_extra_args(false);
  cancel->add_flag("-i,--interactive", options->interactive,
                   "Ask \"Cancel job_id=N name=X partition=P [y/n]?\" for "
                   "each job (answers from standard input)");
  cancel->add_flag("-v,--verbose", options->verbose,
                   "Say what is done to each job");
  cancel->add_flag("-Q,--quiet", options->quiet,
                   "No error for jobs that are already gone");
  // scancel -V: scripts probe with it.
  cancel->set_version_flag("-V,--version", kSlurmVersionLine);
  commands.Add(cancel, [options](const std::string& controller) {
    return RunCancelCommand(controller, *options);
  });
}

}  // namespace gantry::cli
