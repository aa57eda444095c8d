#include "cli/commands/sreport_command.h"

#include <algorithm>
#include <ctime>
#include <iostream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/client/command_support.h"
#include "cli/client/controller_client.h"
#include "cli/commands/report_commands.h"
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

}  // namespace

int RunSreportCommand(std::string_view program, const std::string& controller,
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
  if (!parsed.ok()) {
    std::cerr << parsed.status().message() << "\n";
    return 1;
  }
  const ParsedOptions& options = *parsed;
  if (options.Has("help") || options.positional.empty()) {
    std::cout << kSreportHelp;
    return options.Has("help") ? 0 : 1;
  }
  TimeUnit unit = TimeUnit::kMinutes;
  if (options.Has("time")) {
    absl::StatusOr<TimeUnit> parsed_unit = ParseTimeUnit(options.Last("time"));
    if (!parsed_unit.ok()) return ProgramError(program, parsed_unit.status());
    unit = *parsed_unit;
  }
  bool gpus = false;
  if (options.Has("tres")) {
    const std::string tres = absl::AsciiStrToLower(options.Last("tres"));
    if (tres == "gres/gpu" || tres == "gpu") {
      gpus = true;
    } else if (tres != "cpu") {
      return ProgramError(
          program, absl::InvalidArgumentError(
                       absl::StrCat("invalid TRES \"", tres.substr(0, 40),
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
      if (!when.ok()) return ProgramError(program, when.status());
      (key == "start" ? start : end) = *when;
    } else if (key == "users" || key == "user") {
      for (const std::string& user : SplitLists({value})) users.push_back(user);
    } else if (key == "topcount") {
      if (!absl::SimpleAtoi(value, &top_count) || top_count == 0) {
        return ProgramError(program,
                            absl::InvalidArgumentError(absl::StrCat(
                                "invalid topcount \"", value.substr(0, 20),
                                "\" (a positive number)")));
      }
    } else if (key == "format" || key == "accounts" || key == "cluster" ||
               key == "clusters" || key == "tree" || key == "group") {
      // Accepted: one cluster, no accounts, and the columns are fixed.
    } else {
      return ProgramError(program,
                          absl::InvalidArgumentError(absl::StrCat(
                              "unknown option \"", word.substr(0, 40),
                              "\" (valid: start=, end=, users=, topcount=)")));
    }
  }
  if (end <= start) {
    return ProgramError(
        program,
        absl::InvalidArgumentError("the period ends before it starts (end=)"));
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
    return ProgramError(
        program, absl::UnimplementedError(absl::StrCat(
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
  // Summed page by page: a long period's jobs are never held whole.
  std::string cluster;
  UsageByUser usage;
  const int64_t now_ms = NowMs();
  if (absl::Status status = client.ForEachAccountingPage(
          request,
          [&](const v1::AccountingResponse& page) {
            cluster = page.cluster_name();
            AddUsage(page.jobs(), start * 1000, end * 1000, now_ms, usage);
            return absl::OkStatus();
          });
      !status.ok()) {
    return ProgramError(program, status);
  }
  double capacity_units = 0;  // CPUs or GPUs of the cluster now
  v1::ListNodesResponse nodes;
  if (unit == TimeUnit::kPercent || kind == Kind::kUtilization) {
    if (absl::Status status = client.ListNodes(nodes); !status.ok()) {
      return ProgramError(program, status);
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
  const std::string units = unit == TimeUnit::kPercent ? TimeUnitWord(unit)
                            : gpus ? absl::StrCat("TRES ", TimeUnitWord(unit))
                                   : absl::StrCat("CPU ", TimeUnitWord(unit));
  const SacctParsable parsable =
      ParsableFrom(options.Has("parsable"), options.Has("parsable2"));
  const bool header = !options.Has("noheader");
  // With -T, Slurm names the TRES in a column before Used, and has no
  // Energy column.
  const bool tres_column = options.Has("tres");
  const std::vector<std::string> tail_names =
      tres_column ? std::vector<std::string>{"TRES Name", "Used"}
                  : std::vector<std::string>{"Used", "Energy"};
  const std::vector<int> tail_widths =
      tres_column ? std::vector<int>{14, 10} : std::vector<int>{10, 10};
  auto with_tail = [&](std::vector<std::string> head, double seconds) {
    if (tres_column) {
      head.push_back(gpus ? "gres/gpu" : "cpu");
      head.push_back(show(seconds));
    } else {
      head.push_back(show(seconds));
      head.push_back("0");
    }
    return head;
  };
  auto table_header = [&](std::vector<std::string> names,
                          std::vector<int> widths) {
    names.insert(names.end(), tail_names.begin(), tail_names.end());
    widths.insert(widths.end(), tail_widths.begin(), tail_widths.end());
    return PrintFieldsHeader(names, widths, parsable);
  };
  std::string out;
  if (kind == Kind::kUtilization) {
    const double allocated = used(usage.total);
    const double idle = std::max(0.0, capacity - allocated);
    const std::vector<int> widths = {9, 10, 10, 10, 10, 10, 10};
    if (header) {
      out += Banner("Cluster Utilization", start, end, units);
      out += PrintFieldsHeader({"Cluster", "Allocated", "Down", "PLND Down",
                                "Idle", "Planned", "Reported"},
                               widths, parsable);
    }
    out += PrintFieldsLine({cluster, show(allocated), show(0), show(0),
                            show(idle), show(0), show(capacity)},
                           widths, parsable, "|");
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
    const std::vector<int> widths = {9, 9, 15, 15};
    std::vector<int> all_widths = widths;
    all_widths.insert(all_widths.end(), tail_widths.begin(), tail_widths.end());
    if (header) {
      out +=
          Banner(absl::StrCat("Top ", top_count, " Users"), start, end, units);
      out +=
          table_header({"Cluster", "Login", "Proper Name", "Account"}, widths);
    }
    for (const auto& [user, seconds] : ranked) {
      out += PrintFieldsLine(with_tail({cluster, user, user, ""}, seconds),
                             all_widths, parsable, "|");
    }
    std::cout << out;
    return 0;
  }
  const std::vector<int> widths = {9, 15, 9, 15};
  std::vector<int> all_widths = widths;
  all_widths.insert(all_widths.end(), tail_widths.begin(), tail_widths.end());
  if (header) {
    out += Banner("Cluster/Account/User Utilization", start, end, units);
    out += table_header({"Cluster", "Account", "Login", "Proper Name"}, widths);
  }
  out +=
      PrintFieldsLine(with_tail({cluster, "root", "", ""}, used(usage.total)),
                      all_widths, parsable, "|");
  for (const auto& [user, seconds] : ranked) {
    out += PrintFieldsLine(with_tail({cluster, "root", user, user}, seconds),
                           all_widths, parsable, "|");
  }
  std::cout << out;
  return 0;
}

}  // namespace gantry::cli
