// The job lifecycle (job_lifecycle.h): the shares of its nodes a job holds
// from its start until its ranks there are gone, and its fair-share charge.
#include <algorithm>

#include "daemon/controller/core/job_lifecycle.h"

namespace gantry {

bool JobLifecycle::JobNeedsNode(const JobRuntime& job,
                                const std::string& node) const {
  auto live = job.live_ranks.find(node);
  if (live != job.live_ranks.end() && live->second > 0) return true;
  if (job.record.state() != v1::RUNNING || !job.record.spec().script_once()) {
    return false;
  }
  for (const v1::NodeAllocation& share : job.record.allocation()) {
    if (share.node() == node) return true;
  }
  return false;
}

void JobLifecycle::TakeNodeShares(JobRuntime& job) {
  for (const v1::NodeAllocation& share : job.record.allocation()) {
    auto it = parts_.state.nodes.find(share.node());
    if (it == parts_.state.nodes.end()) continue;
    NodeRuntime& node = it->second;
    node.usage.cpus += share.cpus();
    node.usage.mem_mb += share.mem_mb();
    for (uint32_t gpu : share.gpu_indices()) node.usage.gpus.insert(gpu);
    job.occupied_nodes.insert(share.node());
  }
  parts_.state.Reindex(job);
}

void JobLifecycle::ReleaseNodeShare(JobRuntime& job,
                                    const std::string& node_name) {
  if (!job.occupied_nodes.erase(node_name)) return;
  parts_.state.Reindex(job);
  auto it = parts_.state.nodes.find(node_name);
  if (it == parts_.state.nodes.end()) return;
  NodeRuntime& node = it->second;
  for (const v1::NodeAllocation& share : job.record.allocation()) {
    if (share.node() != node_name) continue;
    node.usage.cpus -= std::min(node.usage.cpus, share.cpus());
    node.usage.mem_mb -= std::min(node.usage.mem_mb, share.mem_mb());
    for (uint32_t gpu : share.gpu_indices()) node.usage.gpus.erase(gpu);
  }
  parts_.passes.Request();
}

void JobLifecycle::ReleaseFinished(JobRuntime& job) {
  // A node's share is free once the job (or its attempt) is over and its
  // ranks there are gone; until then new work could collide with a rank
  // still stopping.
  if (job.record.state() == v1::RUNNING) return;
  std::vector<std::string> releasable;
  for (const std::string& node : job.occupied_nodes) {
    if (ShareReleasable(job, node)) releasable.push_back(node);
  }
  for (const std::string& node : releasable) ReleaseNodeShare(job, node);
}

void JobLifecycle::ReleaseFinishedOn(JobRuntime& job, const std::string& node) {
  if (job.record.state() == v1::RUNNING || !job.occupied_nodes.count(node)) {
    return;
  }
  if (ShareReleasable(job, node)) ReleaseNodeShare(job, node);
}

bool JobLifecycle::ShareReleasable(const JobRuntime& job,
                                   const std::string& node) const {
  auto live = job.live_ranks.find(node);
  auto runtime = parts_.state.nodes.find(node);
  const bool node_down = runtime == parts_.state.nodes.end() ||
                         runtime->second.record.state() == v1::NODE_DOWN;
  return live == job.live_ranks.end() || live->second == 0 || node_down;
}

// GPU-seconds (CPU-seconds for CPU-only jobs) of every attempt (a failed
// attempt held its GPUs too), charged at the end.
void JobLifecycle::ChargeUsage(const v1::JobRecord& record, FairShare& share) {
  double units = 0;
  for (const v1::NodeAllocation& allocation : record.allocation()) {
    units += allocation.gpu_indices_size() > 0 ? allocation.gpu_indices_size()
                                               : allocation.cpus();
  }
  int64_t held_ms = 0;
  for (const v1::AttemptRecord& attempt : record.attempts()) {
    if (attempt.start_time_ms() > 0 && attempt.end_time_ms() > 0) {
      held_ms +=
          std::max<int64_t>(0, attempt.end_time_ms() - attempt.start_time_ms());
    }
  }
  if (held_ms == 0 && record.start_time_ms() > 0) {
    held_ms =
        std::max<int64_t>(0, record.end_time_ms() - record.start_time_ms());
  }
  if (units == 0 || held_ms == 0) return;
  share.AddUsage(record.user(), units * (held_ms / 1000.0),
                 record.end_time_ms());
}

}  // namespace gantry
