// gantry acct (sacct): options, the accounting query, and the lines; the
// other accounting commands are in report_commands.cc.
#include "cli/commands/accounting_commands.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/client/command_support.h"
#include "cli/client/controller_client.h"
#include "cli/commands/report_commands.h"
#include "cli/commands/stat_command.h"
#include "cli/slurm/sacct_format.h"
#include "cli/slurm/sacct_time.h"
#include "cli/slurm/slurm_options.h"
#include "cli/views/group_name.h"
#include "cli/views/json_list.h"
#include "cli/views/output_format.h"
#include "common/text.h"

namespace gantry::cli {
namespace {

constexpr char kSacctHelp[] =
    R"(Usage: sacct [OPTIONS]   (also: gantry acct [OPTIONS])

Accounting data of jobs, running or long finished (for as long as gantryd
keeps its history): one line per job, its batch script (ID.batch) and each
of its steps (ID.0, ID.1, ...). Users see their own jobs; admins everyone's.

Selection:
  -j, --jobs LIST         ID, ID_TASK (array task), ID.batch, ID.STEP
  -u, --user LIST         these users' jobs (default: yours; all for root)
  -a, --allusers          every user's jobs (those you may see)
  -A, --accounts LIST     only jobs of these accounts
      --name LIST         jobs with these names
  -r, --partition LIST    jobs in these partitions
  -s, --state LIST        CA CD F NF OOM PD R TO (or long names) during the
                          window; alone it means "now" (running jobs)
  -S, --starttime TIME    jobs eligible or running after TIME (default:
                          midnight today; with -j the epoch; with -s now)
  -E, --endtime TIME      ... and before TIME (default: now)
                          TIME: YYYY-MM-DD[THH:MM[:SS]], HH:MM[:SS],
                          MMDD[YY], MM/DD[/YY], now, now-1hour, now-2days,
                          midnight, noon, teatime
  -X, --allocations       job lines only (no .batch or step lines)
  -L, --allclusters, -M, --clusters NAME   accepted: one cluster

Output:
  -o, --format LIST       fields, e.g. JobID%20,State,Elapsed (sacct -e
                          lists them; %N right-aligns in N columns, %-N left)
  -b, --brief             JobID,State,ExitCode
  -l, --long              every field Gantry has of sacct's long list
  -n, --noheader          no header lines
  -p, --parsable          fields separated by "|", one at the end too
  -P, --parsable2         fields separated by "|", none at the end
      --delimiter TEXT    with -p/-P: this instead of "|"
  -e, --helpformat        list the fields
      --json              the jobs as JSON
  -D, --duplicates, -v, --verbose, -T, --truncate, --noconvert: accepted

SACCT_FORMAT sets the default --format.
)";

const std::vector<SlurmOption>& SacctOptions() {
  static const std::vector<SlurmOption> kOptions = {
      {"jobs", 'j', true},
      {"user", 'u', true},
      {"uid", 0, true},
      {"allusers", 'a', false},
      {"accounts", 'A', true},
      {"name", 0, true},
      {"partition", 'r', true},
      {"state", 's', true},
      {"starttime", 'S', true},
      {"endtime", 'E', true},
      {"allocations", 'X', false},
      {"allclusters", 'L', false},
      {"clusters", 'M', true},
      {"format", 'o', true},
      {"brief", 'b', false},
      {"long", 'l', false},
      {"noheader", 'n', false},
      {"parsable", 'p', false},
      {"parsable2", 'P', false},
      {"delimiter", 0, true},
      {"helpformat", 'e', false},
      {"json", 0, false},
      {"duplicates", 'D', false},
      {"verbose", 'v', false},
      {"truncate", 'T', false},
      {"noconvert", 0, false},
      {"help", 'h', false},
      {"usage", 0, false},
  };
  return kOptions;
}

std::vector<std::string> SplitAll(const std::vector<std::string>& values) {
  return SplitLists(values);
}

// The step sacct -j ID.STEP names for `job` ("" for the whole job, or
// when -j names it without a step too).
std::string StepNamedFor(const v1::JobRecord& job,
                         const std::vector<SacctJobId>& job_ids) {
  std::string step;
  for (const SacctJobId& id : job_ids) {
    const bool names_it =
        id.array_task
            ? job.array_job_id() == id.job_id &&
                  job.array_task_id() == *id.array_task
            : job.id() == id.job_id || job.array_job_id() == id.job_id;
    if (names_it) {
      step = id.step;
      if (step.empty()) break;
    }
  }
  return step;
}

int RunSacct(std::string_view program, const std::string& controller,
             const std::vector<std::string>& args) {
  absl::StatusOr<ParsedOptions> parsed =
      ParseSlurmOptions(program, SacctOptions(), args);
  if (!parsed.ok()) {
    std::cerr << parsed.status().message() << "\n";
    return 1;
  }
  const ParsedOptions& options = *parsed;
  if (options.Has("help") || options.Has("usage")) {
    std::cout << kSacctHelp;
    return 0;
  }
  if (options.Has("helpformat")) {
    std::cout << SacctHelpFormat();
    return 0;
  }
  if (!options.positional.empty()) {
    return ProgramError(
        program, absl::InvalidArgumentError(absl::StrCat(
                     "unexpected argument \"", options.positional.front(),
                     "\" (job ids go with -j)")));
  }
  // The layout: -o, else -b/-l, else SACCT_FORMAT, else Slurm's default.
  std::string format_text = kSacctDefaultFormat;
  bool skip_unknown = false;
  if (const char* env = std::getenv("SACCT_FORMAT"); env && *env) {
    format_text = env;
  }
  if (options.Has("brief")) format_text = kSacctBriefFormat;
  if (options.Has("long")) {
    format_text = kSacctLongFormat;
    skip_unknown = true;
  }
  if (options.Has("format")) {
    format_text = absl::StrJoin(options.Values("format"), ",");
    skip_unknown = false;
  }
  absl::StatusOr<SacctFormat> format =
      SacctFormat::Parse(format_text, skip_unknown);
  if (!format.ok()) return ProgramError(program, format.status());

  const int64_t now = NowMs() / 1000;
  v1::AccountingRequest request;
  std::vector<SacctJobId> job_ids;
  if (options.Has("jobs")) {
    absl::StatusOr<std::vector<SacctJobId>> ids =
        ParseSacctJobIds(absl::StrJoin(options.Values("jobs"), ","));
    if (!ids.ok()) return ProgramError(program, ids.status());
    job_ids = *std::move(ids);
    for (const SacctJobId& id : job_ids) {
      v1::JobSelector& selector = *request.mutable_filter()->add_jobs();
      selector.set_job_id(id.job_id);
      if (id.array_task) selector.set_array_task_id(*id.array_task);
    }
  }
  SacctStates states;
  if (options.Has("state")) {
    absl::StatusOr<SacctStates> parsed_states =
        ParseSacctStates(absl::StrJoin(options.Values("state"), ","));
    if (!parsed_states.ok())
      return ProgramError(program, parsed_states.status());
    states = *std::move(parsed_states);
    for (v1::JobState state : states.states) {
      request.mutable_filter()->add_states(state);
    }
  }
  std::optional<int64_t> start, end;
  for (const auto& [flag, target] :
       {std::pair{"starttime", &start}, std::pair{"endtime", &end}}) {
    if (!options.Has(flag)) continue;
    absl::StatusOr<int64_t> when = ParseSacctTime(options.Last(flag), now);
    if (!when.ok()) return ProgramError(program, when.status());
    *target = *when;
  }
  const SacctWindow window =
      DefaultSacctWindow(!job_ids.empty(), states.given, start, end, now);
  if (window.end < window.start) {
    return ProgramError(program,
                        absl::InvalidArgumentError(
                            "the start time (-S) is after the end time (-E)"));
  }
  request.set_start_ms(window.start * 1000);
  request.set_end_ms(window.end * 1000 + 999);
  std::vector<std::string> users = SplitAll(options.Values("user"));
  for (const std::string& uid : SplitAll(options.Values("uid"))) {
    users.push_back(uid);
  }
  if (users.empty() && !options.Has("allusers") && getuid() != 0) {
    users.push_back(CurrentUser());
  }
  AddAll(users, *request.mutable_filter()->mutable_users());
  AddAll(SplitAll(options.Values("name")),
         *request.mutable_filter()->mutable_names());
  AddAll(SplitAll(options.Values("partition")),
         *request.mutable_filter()->mutable_partitions());
  request.set_user(CurrentUser());

  // States Gantry never has, and nothing else: nothing can match (one
  // empty page still says the cluster's name).
  const bool nothing_matches = states.given && states.states.empty();
  if (nothing_matches) request.set_page_size(1);
  // -A: accounts are names the jobs carry (checked here: the controller's
  // filter has no accounts).
  const std::vector<std::string> accounts =
      SplitAll(options.Values("accounts"));
  auto wanted = [&](const v1::JobRecord& job) {
    return !nothing_matches &&
           (accounts.empty() ||
            std::find(accounts.begin(), accounts.end(), job.spec().account()) !=
                accounts.end());
  };
  const SacctParsable parsable =
      ParsableFrom(options.Has("parsable"), options.Has("parsable2"));
  const std::string delimiter =
      options.Has("delimiter") ? options.Last("delimiter") : "|";
  SacctContext context;
  context.now_ms = NowMs();
  context.group_name = GroupName;
  const bool allocations = options.Has("allocations");
  bool header_due = !options.Has("noheader");
  // Each page is printed as it arrives: a long history is never held
  // whole, and its first lines show while the rest is read. The JSON
  // document opens with the first page, so an error before it prints
  // nothing but the error.
  std::optional<JsonListWriter> json;
  auto print_page = [&](const v1::AccountingResponse& page) {
    if (options.Has("json")) {
      if (!json) json.emplace(std::cout, "jobs");
      for (const v1::JobRecord& job : page.jobs()) {
        if (wanted(job)) json->Add(JobToJson(job, context.now_ms));
      }
      return absl::OkStatus();
    }
    context.cluster = page.cluster_name();
    std::string out;
    if (header_due) out += format->Header(parsable, delimiter);
    header_due = false;
    for (const v1::JobRecord& job : page.jobs()) {
      if (!wanted(job)) continue;
      for (const SacctRow& row :
           SacctRowsOf(job, allocations, StepNamedFor(job, job_ids))) {
        out += format->Row(row, context, parsable, delimiter);
      }
    }
    std::cout << out << std::flush;
    return absl::OkStatus();
  };
  ControllerClient client(ResolveControllerTarget(controller));
  if (absl::Status status = client.ForEachAccountingPage(request, print_page);
      !status.ok()) {
    return ProgramError(program, status);
  }
  if (options.Has("json") && !json) json.emplace(std::cout, "jobs");
  if (json) json->Finish();
  return 0;
}

}  // namespace

bool IsAccountingCommand(std::string_view command) {
  return command == "acct" || command == "stat" || IsReportCommand(command);
}

int RunAccountingCommand(std::string_view command, std::string_view program,
                         const std::string& controller,
                         const std::vector<std::string>& args) {
  const std::string name = program == "gantry"
                               ? absl::StrCat("gantry ", AsAbsl(command))
                               : std::string(program);
  if (command == "acct") return RunSacct(name, controller, args);
  if (command == "stat") return RunStatCommand(name, controller, args);
  return RunReportCommand(command, name, controller, args);
}

}  // namespace gantry::cli
