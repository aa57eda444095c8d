#include "cli/report_commands.h"

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
#include "cli/command_support.h"
#include "cli/controller_client.h"
#include "cli/slurm/sacct_fields.h"
#include "cli/slurm/sacct_format.h"
#include "cli/slurm/sacct_time.h"
#include "cli/slurm/slurm_options.h"
#include "cli/slurm/usage_report.h"

namespace gantry::cli {
namespace {

constexpr char kSreportHelp[] =
    R"(Usage: sreport [OPTIONS] REPORT [start=TIME] [end=TIME] [users=LIST]
       (also: gantry report ...)

Usage of the cluster over a period (default: yesterday), from the jobs'
runs: each run's overlap with the period times the CPUs (or GPUs, with
-T gres/gpu) it held.

Reports:
  cluster AccountUtilizationByUser   the cluster's total, then each user
  cluster UserUtilizationByAccount   the same, by user first
  cluster Utilization                allocated, idle and reported capacity
  user TopUsage [topcount=N]         the N (10) users who used the most

Options:
  -t, --time UNIT       minutes (default), hours, seconds, percent
  -T, --tres LIST       cpu (default) or gres/gpu (GPU time)
  -n, --noheader        no header lines
  -p, --parsable        "|" after every field; -P, --parsable2: between them
  TIME: YYYY-MM-DD[THH:MM[:SS]], MM/DD[/YY], now-7days, midnight, ...
)";

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

int Fail(std::string_view program, const absl::Status& status) {
  std::cerr << program << ": error: " << status.message() << "\n";
  return 1;
}

int FailParse(const absl::Status& status) {
  std::cerr << status.message() << "\n";
  return 1;
}

SacctParsable ParsableOf(const ParsedOptions& options) {
  return options.Has("parsable2")  ? SacctParsable::kNoEnding
         : options.Has("parsable") ? SacctParsable::kTrailing
                                   : SacctParsable::kNo;
}

std::string Columns(const std::vector<std::string>& values,
                    const std::vector<int>& widths, SacctParsable parsable) {
  return PrintFieldsLine(values, widths, parsable, "|");
}

std::string Header(const std::vector<std::string>& names,
                   const std::vector<int>& widths, SacctParsable parsable) {
  std::string text = PrintFieldsLine(names, widths, parsable, "|", true);
  if (parsable == SacctParsable::kNo) text += PrintFieldsUnderline(widths);
  return text;
}

std::string Banner(const std::string& title, int64_t start, int64_t end,
                   const std::string& units) {
  const std::string rule(80, '-');
  return absl::StrCat(rule, "\n", title, " ", SlurmTime(start * 1000), " - ",
                      SlurmTime((end - 1) * 1000), " (", end - start,
                      " secs)\n", "Usage reported in ", units, "\n", rule,
                      "\n");
}

int64_t MidnightToday(int64_t now) {
  absl::StatusOr<int64_t> midnight = ParseSacctTime("midnight", now);
  return midnight.ok() ? *midnight : now - now % 86400;
}

int RunSreport(std::string_view program, const std::string& controller,
               const std::vector<std::string>& args) {
  static const std::vector<SlurmOption> kOptions = {
      {"time", 't', true},          {"tres", 'T', true},
      {"noheader", 'n', false},     {"parsable", 'p', false},
      {"parsable2", 'P', false},    {"help", 'h', false},
      {"quiet", 'Q', false},        {"verbose", 'v', false},
      {"all_clusters", 'a', false}, {"cluster", 'M', true},
  };
  absl::StatusOr<ParsedOptions> parsed =
      ParseSlurmOptions(program, kOptions, args);
  if (!parsed.ok()) return FailParse(parsed.status());
  const ParsedOptions& options = *parsed;
  if (options.Has("help") || options.positional.empty()) {
    std::cout << kSreportHelp;
    return options.Has("help") ? 0 : 1;
  }
  TimeUnit unit = TimeUnit::kMinutes;
  if (options.Has("time")) {
    absl::StatusOr<TimeUnit> parsed_unit = ParseTimeUnit(options.Last("time"));
    if (!parsed_unit.ok()) return Fail(program, parsed_unit.status());
    unit = *parsed_unit;
  }
  bool gpus = false;
  if (options.Has("tres")) {
    const std::string tres = absl::AsciiStrToLower(options.Last("tres"));
    if (tres == "gres/gpu" || tres == "gpu") {
      gpus = true;
    } else if (tres != "cpu") {
      return Fail(program, absl::InvalidArgumentError(absl::StrCat(
                               "invalid TRES \"", tres.substr(0, 40),
                               "\" (Gantry reports cpu and gres/gpu)")));
    }
  }
  std::vector<std::string> words;
  const int64_t now = NowMs() / 1000;
  int64_t end = MidnightToday(now);
  int64_t start = end - 86400;
  std::vector<std::string> users;
  size_t top_count = 10;
  for (const std::string& word : options.positional) {
    const size_t equals = word.find('=');
    if (equals == std::string::npos) {
      words.push_back(absl::AsciiStrToLower(word));
      continue;
    }
    const std::string key = absl::AsciiStrToLower(word.substr(0, equals));
    const std::string value = word.substr(equals + 1);
    if (key == "start" || key == "end") {
      absl::StatusOr<int64_t> when = ParseSacctTime(value, now);
      if (!when.ok()) return Fail(program, when.status());
      (key == "start" ? start : end) = *when;
    } else if (key == "users" || key == "user") {
      for (const std::string& user : SplitLists({value})) users.push_back(user);
    } else if (key == "topcount") {
      if (!absl::SimpleAtoi(value, &top_count) || top_count == 0) {
        return Fail(program, absl::InvalidArgumentError(absl::StrCat(
                                 "invalid topcount \"", value.substr(0, 20),
                                 "\" (a positive number)")));
      }
    } else if (key == "format" || key == "accounts" || key == "cluster" ||
               key == "clusters" || key == "tree" || key == "group") {
      // Accepted: one cluster, no accounts, and the columns are fixed.
    } else {
      return Fail(program, absl::InvalidArgumentError(absl::StrCat(
                               "unknown option \"", word.substr(0, 40),
                               "\" (valid: start=, end=, users=, topcount=)")));
    }
  }
  if (end <= start) {
    return Fail(program, absl::InvalidArgumentError(
                             "the period ends before it starts (end=)"));
  }
  const std::string report = absl::StrJoin(words, " ");
  enum class Kind { kByUser, kUtilization, kTop };
  Kind kind;
  if (report == "cluster accountutilizationbyuser" ||
      report == "cluster userutilizationbyaccount") {
    kind = Kind::kByUser;
  } else if (report == "cluster utilization") {
    kind = Kind::kUtilization;
  } else if (report == "user topusage") {
    kind = Kind::kTop;
  } else {
    return Fail(program,
                absl::UnimplementedError(absl::StrCat(
                    "report \"", report.substr(0, 60),
                    "\" is not supported (Gantry answers cluster "
                    "AccountUtilizationByUser, cluster "
                    "UserUtilizationByAccount, cluster Utilization and user "
                    "TopUsage)")));
  }
  ControllerClient client(ResolveControllerTarget(controller));
  v1::AccountingRequest request;
  request.set_start_ms(start * 1000);
  request.set_end_ms(end * 1000);
  request.set_user(CurrentUser());
  AddAll(users, *request.mutable_filter()->mutable_users());
  std::vector<v1::JobRecord> jobs;
  if (absl::Status status = client.Accounting(request, jobs); !status.ok()) {
    return Fail(program, status);
  }
  const UsageByUser usage = SumUsage(jobs, start * 1000, end * 1000, NowMs());
  double capacity_units = 0;  // CPUs or GPUs of the cluster now
  v1::ListNodesResponse nodes;
  if (unit == TimeUnit::kPercent || kind == Kind::kUtilization) {
    if (absl::Status status = client.ListNodes(nodes); !status.ok()) {
      return Fail(program, status);
    }
    for (const v1::NodeRecord& node : nodes.nodes()) {
      capacity_units +=
          gpus ? node.inventory().gpus_size() : node.inventory().cpus();
    }
  }
  const double capacity = capacity_units * static_cast<double>(end - start);
  auto used = [&](const Usage& u) {
    return gpus ? u.gpu_seconds : u.cpu_seconds;
  };
  auto show = [&](double seconds) {
    return FormatUsage(seconds, unit, capacity);
  };
  const std::string units = gpus ? absl::StrCat("TRES ", TimeUnitWord(unit))
                                 : absl::StrCat("CPU ", TimeUnitWord(unit));
  const SacctParsable parsable = ParsableOf(options);
  const bool header = !options.Has("noheader");
  std::string out;
  if (kind == Kind::kUtilization) {
    const double allocated = used(usage.total);
    const double idle = std::max(0.0, capacity - allocated);
    if (header) {
      out += Banner("Cluster Utilization", start, end, units);
      out += Header({"Cluster", "Allocated", "Down", "PLND Down", "Idle",
                     "Planned", "Reported"},
                    {9, 10, 10, 10, 10, 10, 10}, parsable);
    }
    out += Columns({kClusterName, show(allocated), show(0), show(0), show(idle),
                    show(0), show(capacity)},
                   {9, 10, 10, 10, 10, 10, 10}, parsable);
    std::cout << out;
    return 0;
  }
  std::vector<std::pair<std::string, double>> ranked;
  for (const auto& [user, u] : usage.users) ranked.emplace_back(user, used(u));
  if (kind == Kind::kTop) {
    std::stable_sort(
        ranked.begin(), ranked.end(),
        [](const auto& a, const auto& b) { return a.second > b.second; });
    if (ranked.size() > top_count) ranked.resize(top_count);
    const std::vector<int> widths = {9, 9, 15, 15, 10, 10};
    if (header) {
      out +=
          Banner(absl::StrCat("Top ", top_count, " Users"), start, end, units);
      out += Header(
          {"Cluster", "Login", "Proper Name", "Account", "Used", "Energy"},
          widths, parsable);
    }
    for (const auto& [user, seconds] : ranked) {
      out += Columns({kClusterName, user, user, "", show(seconds), "0"}, widths,
                     parsable);
    }
    std::cout << out;
    return 0;
  }
  const std::vector<int> widths = {9, 15, 9, 15, 10, 10};
  if (header) {
    out += Banner("Cluster/Account/User Utilization", start, end, units);
    out +=
        Header({"Cluster", "Account", "Login", "Proper Name", "Used", "Energy"},
               widths, parsable);
  }
  out += Columns({kClusterName, "root", "", "", show(used(usage.total)), "0"},
                 widths, parsable);
  for (const auto& [user, seconds] : ranked) {
    out += Columns({kClusterName, "root", user, user, show(seconds), "0"},
                   widths, parsable);
  }
  std::cout << out;
  return 0;
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
    return Fail(program, status);
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
    if (!parsed_ids.ok()) return Fail(program, parsed_ids.status());
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
  const SacctParsable parsable = ParsableOf(options);
  const std::vector<int> widths = {-20, 10, 10, 11, 11, 13, 10};
  std::string out;
  if (!options.Has("noheader")) {
    out += Header({"Account", "User", "RawShares", "NormShares", "RawUsage",
                   "EffectvUsage", "FairShare"},
                  widths, parsable);
  }
  double total = 0;
  for (const v1::UserShare& share : report.shares()) {
    total += share.raw_usage();
  }
  out += Columns(
      {"root", "", "", "", absl::StrCat(std::llround(total)), "1.000000", ""},
      widths, parsable);
  const size_t count = std::max<size_t>(report.shares_size(), 1);
  for (const v1::UserShare& share : report.shares()) {
    if (!users.empty() &&
        std::find(users.begin(), users.end(), share.user()) == users.end()) {
      continue;
    }
    out += Columns({" root", share.user(), "1",
                    absl::StrFormat("%.6f", 1.0 / static_cast<double>(count)),
                    absl::StrCat(std::llround(share.raw_usage())),
                    absl::StrFormat("%.6f", share.effective_usage()),
                    absl::StrFormat("%.6f", share.fair_share())},
                   widths, parsable);
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
    return Fail(program, status);
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
  if (command == "report") return RunSreport(program, controller, args);
  if (command == "prio") return RunSprio(program, controller, args);
  if (command == "share") return RunSshare(program, controller, args);
  return RunSdiag(program, controller, args);
}

}  // namespace gantry::cli
