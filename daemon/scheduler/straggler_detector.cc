#include "daemon/scheduler/straggler_detector.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace gantry {

absl::StatusOr<StragglerResponse> ParseStragglerResponse(
    std::string_view text) {
  if (text == "off") return StragglerResponse::kOff;
  if (text == "report") return StragglerResponse::kReport;
  if (text == "swap") return StragglerResponse::kSwap;
  return absl::InvalidArgumentError(absl::StrCat("unknown straggler policy \"",
                                                 std::string(text),
                                                 "\" (off, report or swap)"));
}

std::string_view StragglerResponseName(StragglerResponse response) {
  switch (response) {
    case StragglerResponse::kOff:
      return "off";
    case StragglerResponse::kReport:
      return "report";
    case StragglerResponse::kSwap:
      return "swap";
  }
  return "off";
}

namespace {

// The median of `sorted` without its element at `skip`: O(1), so judging
// every node of a large job against its peers costs one sort.
double MedianWithout(const std::vector<double>& sorted, size_t skip) {
  const size_t count = sorted.size() - 1;
  auto at = [&](size_t rank) {
    return rank < skip ? sorted[rank] : sorted[rank + 1];
  };
  if (count % 2 == 1) return at(count / 2);
  return (at(count / 2 - 1) + at(count / 2)) / 2;
}

}  // namespace

std::vector<StragglerFinding> DetectStragglers(
    const std::vector<NodeStepTime>& nodes, int64_t now_ms,
    const StragglerPolicy& policy, std::map<std::string, int64_t>& slow_since) {
  std::vector<const NodeStepTime*> judged;
  for (const NodeStepTime& node : nodes) {
    if (node.step_seconds > 0 && now_ms - node.time_ms <= policy.stale_ms) {
      judged.push_back(&node);
    }
  }
  std::map<std::string, int64_t> still_slow;
  std::vector<StragglerFinding> findings;
  if (judged.size() >= static_cast<size_t>(policy.min_peers) + 1) {
    // Leaving the node itself out of its peers keeps one very slow node
    // from pulling the median up in a small job.
    std::sort(judged.begin(), judged.end(),
              [](const NodeStepTime* a, const NodeStepTime* b) {
                return a->step_seconds < b->step_seconds;
              });
    std::vector<double> sorted;
    sorted.reserve(judged.size());
    for (const NodeStepTime* node : judged) {
      sorted.push_back(node->step_seconds);
    }
    const double recover_factor = (1 + policy.slow_factor) / 2;
    for (size_t i = 0; i < judged.size(); ++i) {
      const NodeStepTime* node = judged[i];
      const double median = MedianWithout(sorted, i);
      if (median <= 0) continue;
      const double slowdown = node->step_seconds / median;
      auto known = slow_since.find(node->node);
      const bool was_slow = known != slow_since.end();
      if (slowdown < (was_slow ? recover_factor : policy.slow_factor)) {
        continue;
      }
      const int64_t since = was_slow ? known->second : now_ms;
      still_slow[node->node] = since;
      StragglerFinding& finding = findings.emplace_back();
      finding.node = node->node;
      finding.step_seconds = node->step_seconds;
      finding.peer_median_seconds = median;
      finding.slowdown = slowdown;
      finding.slow_since_ms = since;
      finding.confirmed = now_ms - since >= policy.min_duration_ms;
    }
  }
  slow_since = std::move(still_slow);
  std::sort(findings.begin(), findings.end(),
            [](const StragglerFinding& a, const StragglerFinding& b) {
              if (a.slowdown != b.slowdown) return a.slowdown > b.slowdown;
              return a.node < b.node;
            });
  return findings;
}

double EffectiveStepSeconds(double step_seconds, int64_t last_advance_ms,
                            int64_t last_advance_steps, int64_t now_ms,
                            int64_t slack_ms) {
  if (step_seconds <= 0) return 0;
  const int64_t stalled_ms = now_ms - last_advance_ms - slack_ms;
  if (last_advance_ms <= 0 || stalled_ms <= 0) return step_seconds;
  const double stalled_per_step =
      static_cast<double>(stalled_ms) / 1000.0 /
      static_cast<double>(std::max<int64_t>(1, last_advance_steps));
  return std::max(step_seconds, stalled_per_step);
}

}  // namespace gantry
