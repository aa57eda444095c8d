#include "cli/views/status_screen.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/views/goodput_view.h"
#include "cli/views/output_format.h"
#include "cli/views/replication_screen.h"
#include "cli/views/straggler_view.h"

namespace gantry::cli {
namespace {

constexpr size_t kLabelWidth = 13;
constexpr size_t kMaxTextWidth = 110;  // of a free-text tail on the screen
constexpr size_t kMaxListed = 5;       // ports and reasons listed

// ANSI SGR parameters.
constexpr char kBold[] = "1";
constexpr char kDim[] = "2";
constexpr char kRed[] = "31";
constexpr char kGreen[] = "32";
constexpr char kYellow[] = "33";
constexpr char kCyan[] = "36";

class Painter {
 public:
  explicit Painter(bool on) : on_(on) {}
  std::string operator()(std::string_view text, const char* sgr) const {
    if (!on_ || text.empty()) return std::string(text);
    return absl::StrCat("\x1b[", sgr, "m", std::string(text), "\x1b[0m");
  }

 private:
  bool on_;
};

std::string Truncate(std::string text, size_t width) {
  if (text.size() <= width) return text;
  text.resize(width - 3);
  return text + "...";
}

std::string Percent(double share) {
  return absl::StrCat(static_cast<int>(std::lround(share * 100)), "%");
}

std::string Plural(uint64_t count, const char* one, const char* many) {
  return absl::StrCat(count, " ", count == 1 ? one : many);
}

// "MM-DD HH:MM:SS" in local time.
std::string ShortTime(int64_t epoch_ms) {
  std::string time = FormatTime(epoch_ms);
  if (time.size() != 19) return time;
  time[10] = ' ';
  return time.substr(5);
}

std::string JobStateKey(v1::JobState state) {
  return absl::AsciiStrToLower(StateName(state));
}

const char* JobStateColor(v1::JobState state) {
  switch (state) {
    case v1::PENDING:
      return kYellow;
    case v1::RUNNING:
    case v1::COMPLETED:
      return kGreen;
    case v1::CANCELLED:
      return kDim;
    default:
      return kRed;
  }
}

const char* IssueColor(const std::string& state) {
  return state == "down" || state == "unreachable" ? kRed : kYellow;
}

const char* EventColor(const std::string& kind) {
  return kind == "job_failed" || kind == "node_down" ? kRed : kYellow;
}

// "job_restarted" -> "restarted", "node_down" -> "down".
std::string EventWord(const std::string& kind) {
  const size_t underscore = kind.find('_');
  return underscore == std::string::npos ? kind : kind.substr(underscore + 1);
}

class Screen {
 public:
  explicit Screen(const Painter& paint) : paint_(paint) {}

  // A labelled line; continuation lines of the same topic pass "".
  void Line(std::string_view label, const std::string& text) {
    std::string padded(label);
    padded.resize(kLabelWidth, ' ');
    absl::StrAppend(&out_, label.empty() ? padded : paint_(padded, kBold), text,
                    "\n");
  }
  std::string Take() { return std::move(out_); }

 private:
  const Painter& paint_;
  std::string out_;
};

}  // namespace

absl::StatusOr<ColorMode> ParseColorMode(std::string_view word) {
  const std::string lower = absl::AsciiStrToLower(std::string(word));
  if (lower == "auto") return ColorMode::kAuto;
  if (lower == "always") return ColorMode::kAlways;
  if (lower == "never") return ColorMode::kNever;
  return absl::InvalidArgumentError(
      absl::StrCat("invalid --color \"", std::string(word),
                   "\": use auto, always or never"));
}

bool ShouldUseColor(ColorMode mode, bool stdout_is_tty, const char* no_color,
                    const char* term) {
  switch (mode) {
    case ColorMode::kAlways:
      return true;
    case ColorMode::kNever:
      return false;
    case ColorMode::kAuto:
      break;
  }
  if (!stdout_is_tty) return false;
  if (no_color != nullptr && *no_color != '\0') return false;
  return term == nullptr || std::string_view(term) != "dumb";
}

bool LocaleIsUtf8(const char* lc_all, const char* lc_ctype, const char* lang) {
  for (const char* value : {lc_all, lc_ctype, lang}) {
    if (value == nullptr || *value == '\0') continue;
    const std::string lower = absl::AsciiStrToLower(value);
    return lower.find("utf-8") != std::string::npos ||
           lower.find("utf8") != std::string::npos;
  }
  return false;
}

std::string FormatBytes(uint64_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes) / 1024;
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, kUnits[unit]);
  return text;
}

std::string FormatSeconds(double seconds) {
  char text[32];
  if (seconds < 0.01) {
    std::snprintf(text, sizeof text, "%.1f ms", seconds * 1000);
  } else if (seconds < 1) {
    std::snprintf(text, sizeof text, "%.0f ms", seconds * 1000);
  } else {
    std::snprintf(text, sizeof text, "%.2f s", seconds);
  }
  return text;
}

std::string UtilizationSparkline(const v1::ClusterStatusResponse& status,
                                 bool unicode, size_t width) {
  static const char* const kBlocks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  static const char kAscii[] = "_.:-=+*#";
  const auto& points = status.gpu_utilization();
  if (points.empty() || width == 0) return "";
  const int64_t bucket_ms =
      std::max<int64_t>(1, int64_t{status.utilization_bucket_seconds()} * 1000);
  const int64_t last = points[points.size() - 1].start_ms();
  const int64_t first = std::max(
      points[0].start_ms(), last - static_cast<int64_t>(width - 1) * bucket_ms);
  std::string line;
  int point = 0;
  for (int64_t start = first; start <= last; start += bucket_ms) {
    while (point < points.size() && points[point].start_ms() < start) ++point;
    if (point >= points.size() || points[point].start_ms() != start) {
      line += ' ';
      continue;
    }
    const double share = std::clamp(points[point].allocated_share(), 0.0, 1.0);
    const int level = std::min(7, static_cast<int>(share * 8));
    line += unicode ? kBlocks[level] : std::string(1, kAscii[level]);
  }
  return line;
}

std::string RenderStatusScreen(const v1::ClusterStatusResponse& status,
                               const StatusScreenOptions& options) {
  const Painter paint(options.color);
  Screen screen(paint);
  const int64_t uptime_s =
      std::max<int64_t>(0, (status.now_ms() - status.started_ms()) / 1000);

  screen.Line("Controller", absl::StrCat("gantryd ", status.version(), " at ",
                                         options.controller, ", up ",
                                         FormatDuration(uptime_s)));
  std::string commits =
      status.commits_sampled() == 0
          ? "no commit since start"
          : absl::StrCat(
                "last commit ", FormatSeconds(status.last_commit_seconds()),
                ", median ", FormatSeconds(status.median_commit_seconds()),
                " of ", Plural(status.commits_sampled(), "commit", "commits"));
  screen.Line("", absl::StrCat("state ", FormatBytes(status.state_size_bytes()),
                               " in ", status.state_dir(), "; ", commits));
  for (const auto& [label, text] : ReplicationLines(status.replication())) {
    screen.Line(label, text);
  }

  const v1::StatusNodeCounts& nodes = status.node_counts();
  if (status.nodes_total() == 0) {
    screen.Line("Nodes", "none registered (start gantry-agent on the nodes)");
  } else {
    std::vector<std::string> parts;
    const std::pair<uint32_t, const char*> kinds[] = {
        {nodes.idle(), "idle"},
        {nodes.mixed(), "mixed"},
        {nodes.allocated(), "allocated"},
        {nodes.drained(), "drained"},
        {nodes.degraded(), "degraded"},
        {nodes.down(), "down"},
        {nodes.unreachable(), "unreachable"}};
    for (const auto& [count, word] : kinds) {
      if (count == 0) continue;
      const std::string_view name(word);
      const char* color = name == "idle"                            ? kGreen
                          : name == "down" || name == "unreachable" ? kRed
                          : name == "drained" || name == "degraded" ? kYellow
                                                                    : kCyan;
      parts.push_back(paint(absl::StrCat(count, " ", word), color));
    }
    if (parts.empty()) {
      // A gantryd from before node_counts: its coarser counts.
      parts = {absl::StrCat(status.nodes_up(), " up"),
               absl::StrCat(status.nodes_unreachable(), " unreachable"),
               absl::StrCat(status.nodes_down(), " down")};
    }
    std::string line = absl::StrCat(status.nodes_total(),
                                    " total: ", absl::StrJoin(parts, ", "));
    std::vector<std::string> extra;
    if (nodes.simulated() > 0) {
      extra.push_back(absl::StrCat(nodes.simulated(), " simulated"));
    }
    if (nodes.hot_spares() > 0) {
      extra.push_back(Plural(nodes.hot_spares(), "hot spare", "hot spares"));
    }
    if (!extra.empty())
      absl::StrAppend(&line, " (", absl::StrJoin(extra, ", "), ")");
    screen.Line("Nodes", line);
  }

  if (status.gpus_total() == 0) {
    screen.Line("GPUs", "none");
  } else {
    screen.Line("GPUs", absl::StrCat(
                            status.gpus_total(),
                            " total: ", status.gpus_allocated(), " allocated, ",
                            paint(absl::StrCat(status.gpus_idle(), " idle"),
                                  status.gpus_idle() ? kGreen : kDim),
                            ", ",
                            paint(absl::StrCat(status.gpus_down(), " down"),
                                  status.gpus_down() ? kRed : kDim)));
    std::string utilization = absl::StrCat(
        paint(Percent(status.gpu_utilization_now()), kBold), " allocated now");
    if (!status.gpu_utilization().empty()) {
      const int64_t span_min =
          (status.now_ms() - status.gpu_utilization(0).start_ms() + 59'999) /
          60'000;
      absl::StrAppend(
          &utilization, ", ", Percent(status.gpu_utilization_mean()),
          span_min >= 59 ? " over the last hour"
                         : absl::StrCat(" over the last ",
                                        std::max<int64_t>(1, span_min), " min"),
          "  ",
          paint(absl::StrCat("[", UtilizationSparkline(status, options.unicode),
                             "]"),
                kCyan));
    }
    screen.Line("Utilization", utilization);
  }
  screen.Line("CPUs", absl::StrCat(status.cpus_allocated(), " of ",
                                   status.cpus_total(), " allocated"));

  std::vector<std::string> jobs;
  for (const v1::JobStateCount& count : status.jobs_by_state()) {
    if (count.count() == 0) continue;
    jobs.push_back(
        paint(absl::StrCat(count.count(), " ", JobStateKey(count.state())),
              JobStateColor(count.state())));
  }
  if (status.jobs_by_state().empty() &&
      status.jobs_pending() + status.jobs_running() + status.jobs_finished() >
          0) {
    // A gantryd from before jobs_by_state.
    jobs = {absl::StrCat(status.jobs_pending(), " pending"),
            absl::StrCat(status.jobs_running(), " running"),
            absl::StrCat(status.jobs_finished(), " finished")};
  }
  screen.Line("Jobs", jobs.empty() ? "none yet" : absl::StrJoin(jobs, ", "));

  if (status.pending_reasons().empty()) {
    screen.Line("Pending", "no job waits");
  } else {
    size_t shown = 0;
    for (const v1::ReasonCount& reason : status.pending_reasons()) {
      if (shown == kMaxListed) {
        screen.Line(
            "", absl::StrCat("... and ", status.pending_reasons_size() - shown,
                             " more reasons"));
        break;
      }
      std::string line =
          absl::StrCat(reason.count(), " ", paint(reason.reason(), kYellow));
      if (reason.example_job_id() != 0) {
        absl::StrAppend(&line, "  (job ", reason.example_job_id(),
                        reason.example().empty() ? "" : ": " + reason.example(),
                        ")");
      }
      screen.Line(shown++ == 0 ? "Pending" : "", Truncate(line, kMaxTextWidth));
    }
  }

  if (status.hca_ports_total() == 0) {
    screen.Line("Fabric", "no compute HCA ports reported");
  } else if (status.hca_ports_down().empty()) {
    screen.Line("Fabric",
                absl::StrCat(Plural(status.hca_ports_total(),
                                    "compute HCA port", "compute HCA ports"),
                             ", ", paint("all active", kGreen)));
  } else {
    screen.Line("Fabric",
                absl::StrCat(Plural(status.hca_ports_total(),
                                    "compute HCA port", "compute HCA ports"),
                             ", ",
                             paint(absl::StrCat(status.hca_ports_down_size(),
                                                " not active"),
                                   kRed),
                             ":"));
    size_t shown = 0;
    for (const v1::PortDown& port : status.hca_ports_down()) {
      if (shown++ == kMaxListed) {
        screen.Line("", absl::StrCat("... and ",
                                     status.hca_ports_down_size() - kMaxListed,
                                     " more"));
        break;
      }
      screen.Line("", absl::StrCat(port.node(), " ", port.device(), " port ",
                                   port.port(), " ", port.state()));
    }
  }

  const v1::DatasetCacheUse& cache = status.dataset_cache();
  if (cache.nodes_reporting() == 0) {
    screen.Line("Cache", "no node reports a dataset cache");
  } else {
    std::string used = FormatBytes(cache.used_bytes());
    if (cache.capacity_bytes() > 0) {
      absl::StrAppend(&used, " of ", FormatBytes(cache.capacity_bytes()), " (",
                      cache.used_bytes() * 100 / cache.capacity_bytes(), "%)");
    }
    screen.Line(
        "Cache",
        absl::StrCat(used, " on ",
                     Plural(cache.nodes_reporting(), "node", "nodes"), ", ",
                     Plural(cache.datasets(), "dataset", "datasets"), " (",
                     Plural(cache.copies(), "copy", "copies"), ", ",
                     cache.pinned_copies(), " pinned by jobs)"));
  }

  if (status.node_issues().empty()) {
    screen.Line("Attention", "every node takes work");
  } else {
    size_t name_width = 0;
    for (const v1::NodeIssue& issue : status.node_issues()) {
      name_width = std::max(name_width, issue.node().size());
    }
    bool first = true;
    for (const v1::NodeIssue& issue : status.node_issues()) {
      std::string name = issue.node();
      name.resize(name_width, ' ');
      std::string state = issue.state() + (issue.busy() ? " (busy)" : "");
      std::string padded_state = state;
      padded_state.resize(std::max<size_t>(state.size(), 18), ' ');
      screen.Line(
          first ? "Attention" : "",
          absl::StrCat(name, "  ",
                       paint(padded_state, IssueColor(issue.state())),
                       Truncate(issue.reason().empty() ? "-" : issue.reason(),
                                kMaxTextWidth)));
      first = false;
    }
  }

  bool first_straggler = true;
  for (const v1::JobStragglers& job : status.straggler_jobs()) {
    for (const std::string& line : StragglerLines(job, status.now_ms())) {
      screen.Line(first_straggler ? "Stragglers" : "",
                  Truncate(absl::StrCat("job ", job.job_id(), ": ", line),
                           kMaxTextWidth));
      first_straggler = false;
    }
  }
  screen.Line("Goodput", absl::StrCat("last day: ",
                                      GoodputLine(status.goodput_last_day())));

  std::string summary = absl::StrCat(
      "last hour: ",
      Plural(status.job_failures_last_hour(), "job failure", "job failures"),
      " (", status.restarts_last_hour(), " restarted), ",
      Plural(status.node_failures_last_hour(), "node failure",
             "node failures"));
  screen.Line("Failures", summary);
  size_t shown = 0;
  for (const v1::StatusEvent& event : status.recent_failures()) {
    if (shown++ == options.max_events) break;
    std::string word = EventWord(event.kind());
    word.resize(std::max<size_t>(word.size(), 9), ' ');
    std::string what;
    if (event.job_id() != 0) {
      what = absl::StrCat("job ", event.job_id(), " attempt ", event.attempt(),
                          event.nodes().empty() ? "" : " on " + event.nodes(),
                          ": ", event.reason(),
                          event.detail().empty() ? "" : ", " + event.detail());
    } else {
      what = absl::StrCat(event.nodes(), ": ", event.detail());
    }
    screen.Line("", absl::StrCat(paint(ShortTime(event.time_ms()), kDim), "  ",
                                 paint(word, EventColor(event.kind())), "  ",
                                 Truncate(what, kMaxTextWidth)));
  }
  return screen.Take();
}

nlohmann::json StatusToJson(const v1::ClusterStatusResponse& status,
                            const std::string& controller) {
  const v1::StatusNodeCounts& nodes = status.node_counts();
  const v1::DatasetCacheUse& cache = status.dataset_cache();
  nlohmann::json jobs = {{"pending", status.jobs_pending()},
                         {"running", status.jobs_running()},
                         {"finished", status.jobs_finished()}};
  for (const v1::JobStateCount& count : status.jobs_by_state()) {
    jobs[JobStateKey(count.state())] = count.count();
  }
  nlohmann::json series = nlohmann::json::array();
  for (const v1::UtilizationPoint& point : status.gpu_utilization()) {
    series.push_back({{"start", FormatTime(point.start_ms())},
                      {"start_ms", point.start_ms()},
                      {"allocated_share", point.allocated_share()}});
  }
  nlohmann::json reasons = nlohmann::json::array();
  for (const v1::ReasonCount& reason : status.pending_reasons()) {
    reasons.push_back({{"reason", reason.reason()},
                       {"count", reason.count()},
                       {"example_job_id", reason.example_job_id()},
                       {"example", reason.example()}});
  }
  nlohmann::json ports = nlohmann::json::array();
  for (const v1::PortDown& port : status.hca_ports_down()) {
    ports.push_back({{"node", port.node()},
                     {"device", port.device()},
                     {"port", port.port()},
                     {"state", port.state()}});
  }
  nlohmann::json issues = nlohmann::json::array();
  nlohmann::json degraded = nlohmann::json::array();
  for (const v1::NodeIssue& issue : status.node_issues()) {
    issues.push_back({{"node", issue.node()},
                      {"state", issue.state()},
                      {"reason", issue.reason()},
                      {"busy", issue.busy()}});
    if (issue.state() == "degraded") {
      degraded.push_back({{"node", issue.node()}, {"reason", issue.reason()}});
    }
  }
  nlohmann::json failures = nlohmann::json::array();
  for (const v1::StatusEvent& event : status.recent_failures()) {
    failures.push_back({{"time", FormatTime(event.time_ms())},
                        {"time_ms", event.time_ms()},
                        {"kind", event.kind()},
                        {"job_id", event.job_id()},
                        {"attempt", event.attempt()},
                        {"nodes", event.nodes()},
                        {"reason", event.reason()},
                        {"detail", event.detail()}});
  }
  return {
      {"controller", controller},
      {"version", status.version()},
      {"started", FormatTime(status.started_ms())},
      {"uptime_seconds",
       std::max<int64_t>(0, (status.now_ms() - status.started_ms()) / 1000)},
      {"state_dir", status.state_dir()},
      {"state_size_bytes", status.state_size_bytes()},
      {"commit",
       {{"last_seconds", status.last_commit_seconds()},
        {"median_seconds", status.median_commit_seconds()},
        {"sampled", status.commits_sampled()}}},
      {"nodes",
       {{"total", status.nodes_total()},
        {"up", status.nodes_up()},
        {"idle", nodes.idle()},
        {"mixed", nodes.mixed()},
        {"allocated", nodes.allocated()},
        {"drained", nodes.drained()},
        {"degraded", nodes.degraded()},
        {"down", status.nodes_down()},
        {"unreachable", status.nodes_unreachable()},
        {"simulated", nodes.simulated()},
        {"hot_spares", nodes.hot_spares()}}},
      {"cpus",
       {{"total", status.cpus_total()},
        {"allocated", status.cpus_allocated()}}},
      {"gpus",
       {{"total", status.gpus_total()},
        {"allocated", status.gpus_allocated()},
        {"idle", status.gpus_idle()},
        {"down", status.gpus_down()}}},
      {"gpu_utilization",
       {{"now", status.gpu_utilization_now()},
        {"mean", status.gpu_utilization_mean()},
        {"bucket_seconds", status.utilization_bucket_seconds()},
        {"series", series}}},
      {"jobs", jobs},
      {"pending_reasons", reasons},
      {"fabric",
       {{"hca_ports", status.hca_ports_total()},
        {"hca_ports_down", ports},
        {"degraded_nodes", degraded}}},
      {"dataset_cache",
       {{"nodes_reporting", cache.nodes_reporting()},
        {"capacity_bytes", cache.capacity_bytes()},
        {"used_bytes", cache.used_bytes()},
        {"datasets", cache.datasets()},
        {"copies", cache.copies()},
        {"pinned_copies", cache.pinned_copies()}}},
      {"node_issues", issues},
      {"recent_failures", failures},
      {"straggler_jobs", StragglerJobsToJson(status)},
      {"last_hour",
       {{"job_failures", status.job_failures_last_hour()},
        {"restarts", status.restarts_last_hour()},
        {"node_failures", status.node_failures_last_hour()}}},
      {"next_job_id", status.next_job_id()},
      {"replication", ReplicationToJson(status.replication())},
      {"goodput_last_day", [&] {
         nlohmann::json goodput = GoodputToJson(status.goodput_last_day());
         goodput["window_seconds"] = status.goodput_window_seconds();
         return goodput;
       }()}};
}

}  // namespace gantry::cli
