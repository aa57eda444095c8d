#include "cli/commands/report_commands.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <iostream>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/client/command_support.h"
#include "cli/client/controller_client.h"
#include "cli/commands/sreport_command.h"
#include "cli/slurm/sacct_fields.h"
#include "cli/slurm/sacct_format.h"
#include "cli/slurm/sacct_time.h"
#include "cli/slurm/slurm_options.h"

namespace gantry::cli {
namespace {

constexpr char kSprioHelp[] = R"(Usage: sprio [OPTIONS]   (also: gantry prio)

Priority of pending jobs and its factors, as gantryd's scheduler computes it:
age, fair share and job size, each weighted (gantryd's priority weights).

  -j, --jobs LIST     these jobs
  -u, --user LIST     these users' jobs
  -p, --partition LIST   jobs in these partitions
  -n, --norm          the factors unweighted, from 0 to 1
  -w, --weights       the weights only
  -l, --long          also the user (always shown)
  -h, --noheader      no header line
)";

constexpr char kSshareHelp[] = R"(Usage: sshare [OPTIONS]   (also: gantry share)

Fair-share usage per user: the decayed usage (GPU-seconds, CPU-seconds for
CPU-only work) the scheduler's fair-share factor comes from. Gantry gives
every user one share; there are no accounts.

  -a, --all           every user (default: yours, everyone's for root)
  -u, --users LIST    these users
  -n, --noheader      no header lines
  -p, --parsable      "|" after every field; -P, --parsable2: between them
  -l, --long, -A, --accounts LIST: accepted
)";

constexpr char kSdiagHelp[] = R"(Usage: sdiag   (also: gantry diag)

gantryd's counters since it started: jobs submitted, started, completed,
cancelled and failed, jobs pending and running, and scheduling cycles.
)";

int FailParse(const absl::Status& status) {
  std::cerr << status.message() << "\n";
  return 1;
}

std::string JobIdOf(const v1::PriorityFactors& row) {
  return row.array_job_id() != 0
             ? absl::StrCat(row.array_job_id(), "_", row.array_task_id())
             : absl::StrCat(row.job_id());
}

// Parses the options (or prints `help`) and asks gantryd for its report:
// the exit code when the command is done (help, or an error).
std::optional<int> ParseAndFetch(std::string_view program,
                                 const std::vector<SlurmOption>& table,
                                 const std::vector<std::string>& args,
                                 const char* help,
                                 const std::string& controller,
                                 ParsedOptions& options,
                                 v1::SchedulerReportResponse& report) {
  absl::StatusOr<ParsedOptions> parsed =
      ParseSlurmOptions(program, table, args);
  if (!parsed.ok()) return FailParse(parsed.status());
  options = *std::move(parsed);
  if (options.Has("help") || options.Has("usage")) {
    std::cout << help;
    return 0;
  }
  ControllerClient client(ResolveControllerTarget(controller));
  if (absl::Status status = client.SchedulerReport(report); !status.ok()) {
    return ProgramError(program, status);
  }
  return std::nullopt;
}

int RunSprio(std::string_view program, const std::string& controller,
             const std::vector<std::string>& args) {
  static const std::vector<SlurmOption> kOptions = {
      {"jobs", 'j', true},      {"user", 'u', true},
      {"partition", 'p', true}, {"norm", 'n', false},
      {"weights", 'w', false},  {"long", 'l', false},
      {"noheader", 'h', false}, {"help", 0, false},
      {"usage", 0, false},      {"verbose", 'v', false},
  };
  ParsedOptions options;
  v1::SchedulerReportResponse report;
  if (std::optional<int> done = ParseAndFetch(
          program, kOptions, args, kSprioHelp, controller, options, report)) {
    return *done;
  }
  const bool header = !options.Has("noheader");
  const v1::PriorityWeightsInfo& w = report.weights();
  std::string out;
  if (options.Has("weights")) {
    if (header) {
      out += absl::StrFormat("%15s %9s %8s %10s %10s %10s %10s\n", "JOBID",
                             "PARTITION", "USER", "PRIORITY", "AGE",
                             "FAIRSHARE", "JOBSIZE");
    }
    out +=
        absl::StrFormat("%15s %9s %8s %10s %10.0f %10.0f %10.0f\n", "Weights",
                        "", "", "", w.age(), w.fair_share(), w.job_size());
    std::cout << out;
    return 0;
  }
  const std::vector<std::string> users = SplitLists(options.Values("user"));
  const std::vector<std::string> partitions =
      SplitLists(options.Values("partition"));
  std::vector<SacctJobId> ids;
  if (options.Has("jobs")) {
    absl::StatusOr<std::vector<SacctJobId>> parsed_ids =
        ParseSacctJobIds(absl::StrJoin(options.Values("jobs"), ","));
    if (!parsed_ids.ok()) return ProgramError(program, parsed_ids.status());
    ids = *std::move(parsed_ids);
  }
  const bool norm = options.Has("norm");
  if (header) {
    out += absl::StrFormat("%15s %9s %8s %10s %10s %10s %10s\n", "JOBID",
                           "PARTITION", "USER", "PRIORITY", "AGE", "FAIRSHARE",
                           "JOBSIZE");
  }
  auto listed = [](const std::vector<std::string>& list,
                   const std::string& value) {
    return list.empty() ||
           std::find(list.begin(), list.end(), value) != list.end();
  };
  for (const v1::PriorityFactors& row : report.pending()) {
    if (!listed(users, row.user()) || !listed(partitions, row.partition())) {
      continue;
    }
    if (!ids.empty() &&
        std::none_of(ids.begin(), ids.end(), [&](const SacctJobId& id) {
          return id.array_task ? row.array_job_id() == id.job_id &&
                                     row.array_task_id() == *id.array_task
                               : row.job_id() == id.job_id ||
                                     row.array_job_id() == id.job_id;
        })) {
      continue;
    }
    if (norm) {
      const double total = w.age() + w.fair_share() + w.job_size();
      out += absl::StrFormat("%15s %9s %8s %10.7f %10.7f %10.7f %10.7f\n",
                             JobIdOf(row), row.partition(), row.user(),
                             total > 0 ? row.priority() / total : 0.0,
                             row.age(), row.fair_share(), row.job_size());
    } else {
      out += absl::StrFormat("%15s %9s %8s %10d %10d %10d %10d\n", JobIdOf(row),
                             row.partition(), row.user(),
                             std::llround(row.priority()),
                             std::llround(row.age() * w.age()),
                             std::llround(row.fair_share() * w.fair_share()),
                             std::llround(row.job_size() * w.job_size()));
    }
  }
  std::cout << out;
  return 0;
}

int RunSshare(std::string_view program, const std::string& controller,
              const std::vector<std::string>& args) {
  static const std::vector<SlurmOption> kOptions = {
      {"all", 'a', false},       {"users", 'u', true},
      {"accounts", 'A', true},   {"long", 'l', false},
      {"noheader", 'n', false},  {"parsable", 'p', false},
      {"parsable2", 'P', false}, {"help", 'h', false},
      {"usage", 0, false},       {"verbose", 'v', false},
  };
  ParsedOptions options;
  v1::SchedulerReportResponse report;
  if (std::optional<int> done = ParseAndFetch(
          program, kOptions, args, kSshareHelp, controller, options, report)) {
    return *done;
  }
  std::vector<std::string> users = SplitLists(options.Values("users"));
  if (users.empty() && !options.Has("all") && getuid() != 0) {
    users.push_back(CurrentUser());
  }
  const SacctParsable parsable =
      ParsableFrom(options.Has("parsable"), options.Has("parsable2"));
  const std::vector<int> widths = {-20, 10, 10, 11, 11, 13, 10};
  std::string out;
  if (!options.Has("noheader")) {
    out += PrintFieldsHeader({"Account", "User", "RawShares", "NormShares",
                              "RawUsage", "EffectvUsage", "FairShare"},
                             widths, parsable);
  }
  double total = 0;
  for (const v1::UserShare& share : report.shares()) {
    total += share.raw_usage();
  }
  out += PrintFieldsLine(
      {"root", "", "", "", absl::StrCat(std::llround(total)), "1.000000", ""},
      widths, parsable, "|");
  const size_t count = std::max<size_t>(report.shares_size(), 1);
  for (const v1::UserShare& share : report.shares()) {
    if (!users.empty() &&
        std::find(users.begin(), users.end(), share.user()) == users.end()) {
      continue;
    }
    out += PrintFieldsLine(
        {" root", share.user(), "1",
         absl::StrFormat("%.6f", 1.0 / static_cast<double>(count)),
         absl::StrCat(std::llround(share.raw_usage())),
         absl::StrFormat("%.6f", share.effective_usage()),
         absl::StrFormat("%.6f", share.fair_share())},
        widths, parsable, "|");
  }
  std::cout << out;
  return 0;
}

std::string Stamp(int64_t ms) {
  const time_t seconds = static_cast<time_t>(ms / 1000);
  std::tm tm{};
  localtime_r(&seconds, &tm);
  char text[64];
  std::strftime(text, sizeof text, "%a %b %d %H:%M:%S %Y", &tm);
  return absl::StrCat(text, " (", seconds, ")");
}

int RunSdiag(std::string_view program, const std::string& controller,
             const std::vector<std::string>& args) {
  static const std::vector<SlurmOption> kOptions = {
      {"help", 'h', false}, {"usage", 0, false}, {"all", 'a', false}};
  absl::StatusOr<ParsedOptions> parsed =
      ParseSlurmOptions(program, kOptions, args);
  if (!parsed.ok()) return FailParse(parsed.status());
  if (parsed->Has("help") || parsed->Has("usage")) {
    std::cout << kSdiagHelp;
    return 0;
  }
  ControllerClient client(ResolveControllerTarget(controller));
  v1::SchedulerReportResponse r;
  if (absl::Status status = client.SchedulerReport(r); !status.ok()) {
    return ProgramError(program, status);
  }
  const std::string stars(55, '*');
  std::string out = absl::StrCat(stars, "\nsdiag output at ", Stamp(r.now_ms()),
                                 "\nData since      ", Stamp(r.started_ms()),
                                 "\n", stars, "\n");
  absl::StrAppend(&out, "Jobs submitted: ", r.jobs_submitted(), "\n",
                  "Jobs started:   ", r.jobs_started(), "\n",
                  "Jobs completed: ", r.jobs_completed(), "\n",
                  "Jobs canceled:  ", r.jobs_cancelled(), "\n",
                  "Jobs failed:    ", r.jobs_failed(), "\n\n");
  absl::StrAppend(&out, "Job states ts:  ", Stamp(r.now_ms()), "\n",
                  "Jobs pending:   ", r.jobs_pending(), "\n",
                  "Jobs running:   ", r.jobs_running(), "\n\n");
  absl::StrAppend(&out, "Main schedule statistics (microseconds):\n",
                  "\tLast cycle:   ", r.schedule_cycle_last_us(), "\n",
                  "\tMax cycle:    ", r.schedule_cycle_max_us(), "\n",
                  "\tTotal cycles: ", r.schedule_cycles(), "\n",
                  "\tMean cycle:   ", r.schedule_cycle_mean_us(), "\n");
  if (r.last_cycle_ms() > 0) {
    absl::StrAppend(&out, "\tLast cycle when: ", Stamp(r.last_cycle_ms()),
                    "\n");
  }
  std::cout << out;
  return 0;
}

}  // namespace

bool IsReportCommand(std::string_view command) {
  return command == "report" || command == "prio" || command == "share" ||
         command == "diag";
}

int RunReportCommand(std::string_view command, std::string_view program,
                     const std::string& controller,
                     const std::vector<std::string>& args) {
  if (command == "report") {
    return RunSreportCommand(program, controller, args);
  }
  if (command == "prio") return RunSprio(program, controller, args);
  if (command == "share") return RunSshare(program, controller, args);
  return RunSdiag(program, controller, args);
}

}  // namespace gantry::cli
