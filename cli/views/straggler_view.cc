#include "cli/views/straggler_view.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gantry::cli {

std::vector<std::string> StragglerLines(const v1::JobStragglers& job,
                                        int64_t now_ms) {
  std::vector<std::string> lines;
  for (const v1::Straggler& s : job.stragglers()) {
    lines.push_back(absl::StrFormat(
        "%s rank %d: %.1fx slower (%.2f s/step vs %.2f s) for %d s; %s",
        s.node(), s.rank(), s.slowdown(), s.step_seconds(),
        s.peer_median_seconds(),
        std::max<int64_t>(0, now_ms - s.slow_since_ms()) / 1000, s.action()));
  }
  return lines;
}

std::string JobProgressText(const v1::JobStragglers& job, int64_t now_ms) {
  std::string text;
  if (job.nodes_size() > 0) {
    absl::StrAppend(&text, "   Progress (attempt ", job.attempt(), "):\n");
    for (const v1::NodeProgress& node : job.nodes()) {
      absl::StrAppend(
          &text, absl::StrFormat(
                     "     %s  step %d  %.2f s/step  slowest rank %d, %d "
                     "reporting  %d s ago\n",
                     node.node(), node.step(), node.effective_step_seconds(),
                     node.slowest_rank(), node.ranks(),
                     std::max<int64_t>(0, now_ms - node.time_ms()) / 1000));
    }
  }
  if (job.stragglers_size() > 0) {
    absl::StrAppend(&text, "   Stragglers:\n");
    for (const std::string& line : StragglerLines(job, now_ms)) {
      absl::StrAppend(&text, "     ", line, "\n");
    }
  }
  return text;
}

nlohmann::json JobProgressToJson(const v1::JobStragglers& job) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const v1::NodeProgress& node : job.nodes()) {
    nodes.push_back({{"node", node.node()},
                     {"step", node.step()},
                     {"step_seconds", node.step_seconds()},
                     {"effective_step_seconds", node.effective_step_seconds()},
                     {"ranks", node.ranks()},
                     {"slowest_rank", node.slowest_rank()},
                     {"time_ms", node.time_ms()}});
  }
  nlohmann::json stragglers = nlohmann::json::array();
  for (const v1::Straggler& s : job.stragglers()) {
    stragglers.push_back({{"node", s.node()},
                          {"rank", s.rank()},
                          {"slowdown", s.slowdown()},
                          {"step_seconds", s.step_seconds()},
                          {"peer_median_seconds", s.peer_median_seconds()},
                          {"slow_since_ms", s.slow_since_ms()},
                          {"action", s.action()}});
  }
  return {{"job_id", job.job_id()},
          {"attempt", job.attempt()},
          {"nodes", nodes},
          {"stragglers", stragglers}};
}

nlohmann::json StragglerJobsToJson(const v1::ClusterStatusResponse& status) {
  nlohmann::json jobs = nlohmann::json::array();
  for (const v1::JobStragglers& job : status.straggler_jobs()) {
    nlohmann::json view = JobProgressToJson(job);
    view.erase("nodes");
    jobs.push_back(view);
  }
  return jobs;
}

}  // namespace gantry::cli
