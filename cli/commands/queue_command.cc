#include "cli/commands/queue_command.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/client/command_support.h"
#include "cli/client/controller_client.h"
#include "cli/client/job_selector.h"
#include "cli/slurm/slurm_words.h"
#include "cli/slurm/squeue_format.h"
#include "cli/slurm/squeue_sort.h"
#include "cli/version.h"
#include "cli/views/json_list.h"
#include "cli/views/output_format.h"
#include "cli/views/printable_records.h"
#include "common/hostlist.h"
#include "common/ids.h"

namespace gantry::cli {

namespace {

template <typename T>
bool Allowed(const std::set<T>& allowed, const T& value) {
  return allowed.empty() || allowed.count(value) > 0;
}

// The option's values, or the environment variable's when it was not given.
std::vector<std::string> OrEnvironment(const std::vector<std::string>& values,
                                       const char* variable) {
  if (!values.empty()) return SplitLists(values);
  const char* value = std::getenv(variable);
  if (value == nullptr || *value == '\0') return {};
  return SplitLists({value});
}

std::string OrEnvironment(const std::string& value, const char* variable) {
  if (!value.empty()) return value;
  const char* from_environment = std::getenv(variable);
  return from_environment == nullptr ? "" : from_environment;
}

template <typename Values>
std::set<std::string> AsSet(const Values& values) {
  return {values.begin(), values.end()};
}

// What one pass shows, resolved once from the options and environment.
struct QueueView {
  std::vector<JobSelector> ids;
  std::set<v1::JobState> states;
  std::set<std::string> users, partitions, names, accounts, qos, nodes;
  std::set<std::string> steps;  // JOBID.STEPID; empty: every step
  std::optional<SqueueFormat> format;
  std::optional<SqueueSort> sort;
};

// The layout -o/-O/-l/-s/--start ask for, with squeue's precedence: -O,
// then -o, then the environment's, then the mode's own.
absl::StatusOr<SqueueFormat> ChooseQueueFormat(const QueueOptions& options) {
  if (!options.fields.empty()) return SqueueFormat::ParseFields(options.fields);
  std::string format = options.format;
  if (format.empty()) {
    const std::string fields = OrEnvironment("", "SQUEUE_FORMAT2");
    if (!fields.empty()) return SqueueFormat::ParseFields(fields);
    format = OrEnvironment("", "SQUEUE_FORMAT");
  }
  if (format.empty()) {
    format = options.steps         ? kSqueueStepsFormat
             : options.start       ? kSqueueStartFormat
             : options.long_format ? kSqueueLongFormat
                                   : kSqueueDefaultFormat;
  }
  std::vector<char> unknown;
  absl::StatusOr<SqueueFormat> parsed = SqueueFormat::Parse(format, &unknown);
  // squeue leaves out a letter it does not know and says so.
  for (char letter : unknown) {
    std::cerr << "Invalid job format specification: " << letter << "\n";
  }
  return parsed;
}

absl::StatusOr<QueueView> ResolveView(const QueueOptions& options) {
  QueueView view;
  absl::StatusOr<std::vector<JobSelector>> ids =
      ParseJobSelectors(options.job_ids);
  if (!ids.ok()) return ids.status();
  view.ids = *std::move(ids);
  std::vector<std::string> states =
      OrEnvironment(options.states, "SQUEUE_STATES");
  if (states.empty() && options.start) states = {"PD"};
  if (!states.empty()) {
    absl::StatusOr<std::set<v1::JobState>> parsed =
        ParseJobStates(absl::StrJoin(states, ","));
    if (!parsed.ok()) return parsed.status();
    view.states = *std::move(parsed);
  }
  for (const std::string& user : OrEnvironment(options.users, "SQUEUE_USERS")) {
    // A name, or a uid as squeue also takes; anything else is squeue's
    // "Invalid user".
    if (const passwd* entry = getpwnam(user.c_str())) {
      view.users.insert(entry->pw_name);
      continue;
    }
    uint64_t uid = 0;
    const passwd* by_uid = ParseJobId(user, uid) || user == "0"
                               ? getpwuid(static_cast<uid_t>(uid))
                               : nullptr;
    if (by_uid == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("Invalid user: ", user));
    }
    view.users.insert(by_uid->pw_name);
  }
  if (options.me) view.users.insert(CurrentUser());
  view.partitions =
      AsSet(OrEnvironment(options.partitions, "SQUEUE_PARTITION"));
  view.names = AsSet(OrEnvironment(options.names, "SQUEUE_NAMES"));
  view.accounts = AsSet(OrEnvironment(options.accounts, "SQUEUE_ACCOUNT"));
  view.qos = AsSet(SplitLists(options.qos));
  for (const std::string& expression : options.nodelists) {
    absl::StatusOr<std::vector<std::string>> hosts = ExpandHostlist(expression);
    if (!hosts.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid node list \"", expression,
                       "\": ", hosts.status().message()));
    }
    for (std::string& host : *hosts) view.nodes.insert(std::move(host));
  }
  if (options.steps) view.steps = AsSet(SplitLists(*options.steps));
  absl::StatusOr<SqueueFormat> format = ChooseQueueFormat(options);
  if (!format.ok()) return format.status();
  view.format = *std::move(format);
  std::string sort = OrEnvironment(options.sort, "SQUEUE_SORT");
  if (sort.empty()) sort = options.start ? "S" : kSqueueDefaultSort;
  absl::StatusOr<SqueueSort> parsed_sort = SqueueSort::Parse(sort);
  if (!parsed_sort.ok()) return parsed_sort.status();
  view.sort = *std::move(parsed_sort);
  return view;
}

bool OnNodes(const std::set<std::string>& nodes, const v1::JobRecord& job) {
  if (nodes.empty()) return true;
  for (const v1::NodeAllocation& share : job.allocation()) {
    if (nodes.count(share.node())) return true;
  }
  return false;
}

// One listing: 0, or 1 after printing the error.
int ShowOnce(ControllerClient& client, const QueueOptions& options,
             const QueueView& view) {
  v1::ListJobsRequest request;
  // Finished jobs only when asked for: -a, a finished state, or job ids.
  bool finished = options.all || !view.ids.empty();
  for (v1::JobState state : view.states)
    finished = finished || IsFinished(state);
  request.set_all(finished);
  v1::JobFilter& filter = *request.mutable_filter();
  AddAll(view.users, *filter.mutable_users());
  AddAll(view.partitions, *filter.mutable_partitions());
  AddAll(view.names, *filter.mutable_names());
  for (v1::JobState state : view.states) filter.add_states(state);
  AddSelectors(view.ids, filter);
  JobListing listed_listing;
  JobRecords& listed = listed_listing.jobs();
  if (absl::Status status = client.ListAllJobs(request, listed_listing);
      !status.ok()) {
    return Fail("queue", status);
  }
  for (v1::JobRecord& job : listed) {
    MakePrintable(job,
                  options.json ? OutputKind::kJson : OutputKind::kTerminal);
  }
  if (!view.ids.empty()) {
    bool any = false;
    for (const v1::JobRecord& job : listed) {
      any = any || Selected(view.ids, job);
    }
    if (!any) {
      // None listed: unknown to the controller, or only filtered out by
      // the other options (which is no error)?
      v1::ListJobsRequest known;
      known.set_all(true);
      known.set_page_size(1);
      AddSelectors(view.ids, *known.mutable_filter());
      v1::ListJobsResponse found;
      if (absl::Status status = client.ListJobs(known, found); !status.ok()) {
        return Fail("queue", status);
      }
      if (found.jobs().empty()) {
        // squeue's words for a job id slurmctld does not know.
        std::cerr << "slurm_load_jobs error: Invalid job id specified\n";
        return 1;
      }
    }
  }
  std::vector<const v1::JobRecord*> jobs;
  for (const v1::JobRecord& job : listed) {
    if (Selected(view.ids, job) && Allowed(view.users, job.user()) &&
        Allowed(view.partitions, job.spec().partition()) &&
        Allowed(view.names, job.spec().name()) &&
        Allowed(view.states, job.state()) &&
        Allowed(view.accounts, job.spec().account()) &&
        Allowed(view.qos, JobQos(job.spec())) && OnNodes(view.nodes, job)) {
      jobs.push_back(&job);
    }
  }
  const int64_t now = NowMs();
  view.sort->Apply(jobs, now);
  if (options.json) {
    JsonListWriter list(std::cout, "jobs");
    for (const v1::JobRecord* job : jobs) list.Add(JobToJson(*job, now));
    list.Finish();
    return 0;
  }
  if (!options.no_header &&
      (options.iterate_seconds > 0 || options.long_format || options.verbose)) {
    std::cout << SlurmDateLine() << "\n";
  }
  if (!options.no_header) {
    std::cout << (options.steps ? view.format->StepHeader()
                                : view.format->Header());
  }
  if (options.steps) {
    for (const v1::JobRecord* job : jobs) {
      for (const v1::StepRecord& step : job->steps()) {
        if (step.end_time_ms() != 0) continue;
        if (!view.steps.empty() &&
            !view.steps.count(
                absl::StrCat(job->id(), ".", SlurmStepNumber(step.id())))) {
          continue;
        }
        std::cout << view.format->StepRow(*job, step, now);
      }
    }
    return 0;
  }
  if (options.array_unfolded) {
    for (const v1::JobRecord* job : jobs) {
      std::cout << view.format->Row(*job, now);
    }
    return 0;
  }
  for (const SqueueLine& line : FoldPendingArrayTasks(jobs)) {
    std::cout << view.format->Row(*line.job, now, line.folded_tasks);
  }
  return 0;
}

}  // namespace

int RunQueueCommand(const std::string& controller,
                    const QueueOptions& options) {
  if (options.iterate_seconds < 0) {
    std::cerr << "gantry queue: error: --iterate needs a positive number of "
                 "seconds\n";
    return 1;
  }
  absl::StatusOr<QueueView> view = ResolveView(options);
  if (!view.ok()) return Fail("queue", view.status());
  ControllerClient client(ResolveControllerTarget(controller));
  while (true) {
    const int code = ShowOnce(client, options, *view);
    if (options.iterate_seconds == 0 || code != 0) return code;
    std::cout << "\n" << std::flush;
    sleep(static_cast<unsigned>(options.iterate_seconds));
  }
}

void AddQueueCommand(CommandTable& commands) {
  CLI::App* queue = commands.app().add_subcommand(
      "queue", "List pending and running jobs (squeue)");
  // -h is squeue's --noheader (and sinfo's): help stays on --help.
  queue->set_help_flag("--help", "Print this help message and exit");
  auto options = std::make_shared<QueueOptions>();
  queue->add_flag("-a,--all", options->all,
                  "Include finished jobs still in the controller's live "
                  "state (gantryd's MinJobAge, 300 s by default); older "
                  "ones only through gantry job ID");
  queue
      ->add_option("-u,--user", options->users,
                   "Only these users' jobs (USER[,USER...])")
      ->allow_extra_args(false);
  queue
      ->add_option("-j,--jobs", options->job_ids,
                   "Only these jobs, finished ones too (ID[,ID...]; an "
                   "array's ID means all its tasks, ID_TASK one of them)")
      ->allow_extra_args(false);
  queue
      ->add_option("-p,--partition", options->partitions,
                   "Only jobs in these partitions (PART[,PART...])")
      ->allow_extra_args(false);
  queue
      ->add_option("-t,--states", options->states,
                   "Only jobs in these states: PD,R,CD,F,CA,TO,NF,OOM, long "
                   "names, or all (finished ones as for --all)")
      ->allow_extra_args(false);
  queue->add_option("-o,--format", options->format,
                    "squeue layout, e.g. \"%.18i %.8j %T %R\": Slurm's "
                    "letters (%i %j %u %P %T %t %M %l %L %D %C %R %N %V %S "
                    "%e %r %a %q %Q %E %f %Z %o %k %y %v %m %b ...), %.N "
                    "right-aligns in N columns (default: $SQUEUE_FORMAT)");
  queue->add_option("-O,--Format", options->fields,
                    "squeue's field names: JobID,Name:30,State:.10,WorkDir,"
                    "Command,... (name:WIDTH, name:.WIDTH right-aligned; 20 "
                    "columns by default; default: $SQUEUE_FORMAT2)");
  queue->add_option("-S,--sort", options->sort,
                    "Order: letters or field names, + ascending, - "
                    "descending (default P,t,-p or $SQUEUE_SORT)");
  queue->add_flag("-l,--long", options->long_format,
                  "Slurm's long layout (state, time limit) under a date line");
  queue->add_flag("--start", options->start,
                  "Pending jobs with their expected start time (where the "
                  "backfill scheduler reserved nodes; else N/A)");
  auto steps = std::make_shared<std::vector<std::string>>();
  CLI::Option* steps_option =
      queue
          ->add_option("-s,--steps", *steps,
                       "Running steps (STEPID NAME PARTITION USER TIME "
                       "NODELIST), all or JOBID.STEPID[,...]")
          ->expected(0, 1)
          ->allow_extra_args(false);
  queue->add_option("-i,--iterate", options->iterate_seconds,
                    "Show again every SECONDS, under a date line, until "
                    "interrupted");
  queue
      ->add_option("-n,--name", options->names,
                   "Only jobs with these names (NAME[,NAME...])")
      ->allow_extra_args(false);
  queue
      ->add_option("-w,--nodelist", options->nodelists,
                   "Only jobs on these nodes (a hostlist: node[01-04])")
      ->allow_extra_args(false);
  queue->add_flag("--me", options->me, "Only your jobs (--user=$USER)");
  queue
      ->add_option("-A,--account", options->accounts,
                   "Only jobs of these accounts")
      ->allow_extra_args(false);
  queue
      ->add_option("-q,--qos", options->qos,
                   "Only jobs of these QOS (a job that names none has normal)")
      ->allow_extra_args(false);
  queue->add_flag("-v,--verbose", options->verbose,
                  "A date line above the header");
  queue->add_flag("-h,--noheader", options->no_header,
                  "Leave out the header line");
  queue->add_flag("-r,--array", options->array_unfolded,
                  "Every array task on its own line (by default an array's "
                  "pending tasks share one, as 12_[3-9%2])");
  queue->add_flag("--json", options->json, "Machine-readable output");
  // squeue -V: scripts probe with it.
  queue->set_version_flag("-V,--version", kSlurmVersionLine);
  commands.Add(queue,
               [options, steps, steps_option](const std::string& controller) {
                 if (steps_option->count() > 0) options->steps = *steps;
                 return RunQueueCommand(controller, *options);
               });
}

}  // namespace gantry::cli
