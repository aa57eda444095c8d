#include "daemon/scheduler/preflight_verdict.h"

#include <algorithm>
#include <cstddef>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gantry {
namespace {

constexpr size_t kFiguresForMedian = 3;

// A link of the ring, from node `from` to node `from + 1`.
struct Link {
  bool judged = false;  // both ends answered
  std::string problem;  // failed or slow, and why; empty: fine
  bool slow = false;    // the problem is only slowness
  double mbps = 0;
};

std::string Mbps(double value) { return absl::StrFormat("%.0f MB/s", value); }

std::vector<Link> JudgeLinks(const std::vector<PreflightNodeReport>& reports,
                             double slow_factor, double& median) {
  const size_t n = reports.size();
  std::vector<Link> links(n < 2 ? 0 : n);
  std::vector<double> figures;
  for (size_t i = 0; i < links.size(); ++i) {
    const PreflightNodeReport& from = reports[i];
    const PreflightNodeReport& to = reports[(i + 1) % n];
    Link& link = links[i];
    // A node that never answered is rejected for that; its links say
    // nothing about the other ends. A transfer the receiver's listener
    // never took (busy, flooded) says nothing about either end's network.
    link.judged = from.answered && to.answered && !from.send_not_taken;
    if (!link.judged) continue;
    const std::string arrow = absl::StrCat(from.node, " -> ", to.node);
    if (!from.send_problem.empty()) {
      link.problem = absl::StrCat(arrow, ": ", from.send_problem);
    } else if (!to.receive_problem.empty()) {
      link.problem = absl::StrCat(arrow, ": ", to.receive_problem);
    }
    // The better of the two ends' timings: a busy host delays one end's
    // clock now and then, and a link is slow only if both saw it slow.
    link.mbps = std::max(to.receive_mbps, from.send_mbps);
    if (link.problem.empty() && link.mbps > 0) figures.push_back(link.mbps);
  }
  median = PreflightMedian(figures);
  if (slow_factor <= 0 || figures.size() < kFiguresForMedian) return links;
  for (size_t i = 0; i < links.size(); ++i) {
    Link& link = links[i];
    if (!link.judged || !link.problem.empty() || link.mbps <= 0) continue;
    if (link.mbps < slow_factor * median) {
      link.slow = true;
      link.problem = absl::StrCat(
          reports[i].node, " -> ", reports[(i + 1) % n].node, ": TCP ",
          Mbps(link.mbps), ", below ", absl::StrFormat("%g", slow_factor),
          " x the gang's median ", Mbps(median));
    }
  }
  return links;
}

std::vector<double> Figures(const std::vector<PreflightNodeReport>& reports,
                            double PreflightNodeReport::*field) {
  std::vector<double> values;
  for (const PreflightNodeReport& report : reports) {
    if (report.answered && report.*field > 0) values.push_back(report.*field);
  }
  return values;
}

}  // namespace

double PreflightMedian(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  if (values.size() % 2 == 1) return values[middle];
  return (values[middle - 1] + values[middle]) / 2;
}

PreflightVerdict JudgePreflight(const std::vector<PreflightNodeReport>& reports,
                                double slow_factor, int64_t timeout_ms) {
  PreflightVerdict verdict;
  const size_t n = reports.size();
  const std::vector<Link> links =
      JudgeLinks(reports, slow_factor, verdict.median_link_mbps);
  verdict.median_round_trip_us =
      PreflightMedian(Figures(reports, &PreflightNodeReport::round_trip_us));
  verdict.median_gloo_mbps =
      PreflightMedian(Figures(reports, &PreflightNodeReport::gloo_mbps));
  const std::vector<double> site =
      Figures(reports, &PreflightNodeReport::site_mbps);
  verdict.median_site_mbps = PreflightMedian(site);
  const bool judge_site = slow_factor > 0 && site.size() >= kFiguresForMedian;

  std::vector<std::optional<std::string>> reasons(n);
  std::vector<bool> slow_only(n, false);
  for (size_t i = 0; i < n; ++i) {
    const PreflightNodeReport& report = reports[i];
    if (!report.answered) {
      reasons[i] =
          absl::StrCat("pre-flight: no answer within ",
                       absl::StrFormat("%g", timeout_ms / 1000.0), " s");
    } else if (!report.passed) {
      reasons[i] = absl::StrCat("pre-flight: ", report.problem);
    } else if (!links.empty() && !links[i].problem.empty() &&
               !links[(i + n - 1) % n].problem.empty()) {
      const bool both_slow = links[i].slow && links[(i + n - 1) % n].slow;
      reasons[i] =
          absl::StrCat(both_slow ? "pre-flight: both ring links slow: "
                                 : "pre-flight: both ring links bad: ",
                       links[i].problem, "; ", links[(i + n - 1) % n].problem);
      slow_only[i] = both_slow;
    } else if (judge_site && report.site_mbps > 0 &&
               report.site_mbps < slow_factor * verdict.median_site_mbps) {
      reasons[i] = absl::StrCat(
          "pre-flight: site check bus bandwidth ", Mbps(report.site_mbps),
          ", below ", absl::StrFormat("%g", slow_factor),
          " x the gang's median ", Mbps(verdict.median_site_mbps));
      slow_only[i] = true;
    }
  }
  // A broken link neither of whose ends was rejected above: both go (a
  // degraded end is otherwise fine, so it does not explain the break). A
  // slow one alone blames nobody: one end's figures do not say which.
  const auto rejected = [&](size_t k) { return reasons[k] && !slow_only[k]; };
  for (size_t i = 0; i < links.size(); ++i) {
    const size_t to = (i + 1) % n;
    if (links[i].problem.empty() || links[i].slow || rejected(i) ||
        rejected(to)) {
      continue;
    }
    reasons[i] = reasons[to] =
        absl::StrCat("pre-flight: ring link bad: ", links[i].problem);
    slow_only[i] = slow_only[to] = false;
  }
  for (size_t i = 0; i < n; ++i) {
    if (!reasons[i]) continue;
    (slow_only[i] ? verdict.degraded : verdict.rejected)
        .push_back({reports[i].node, *reasons[i]});
  }
  return verdict;
}

}  // namespace gantry
