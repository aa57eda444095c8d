#include "daemon/launch/step_resources.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"

namespace gantry {
namespace {

struct NodeHeld {
  uint64_t cpus = 0;
  std::set<uint32_t> gpus;
};

// What the job's running, non-overlapping steps hold on each node.
std::map<std::string, NodeHeld> HeldByRunningSteps(const v1::JobRecord& job) {
  std::map<std::string, NodeHeld> held;
  for (const v1::StepRecord& step : job.steps()) {
    if (step.end_time_ms() != 0 || step.overlap() ||
        step.attempt() != job.attempt()) {
      continue;
    }
    for (const v1::NodeAllocation& share : step.nodes()) {
      NodeHeld& node = held[share.node()];
      node.cpus += share.cpus();
      node.gpus.insert(share.gpu_indices().begin(), share.gpu_indices().end());
    }
  }
  return held;
}

const v1::NodeAllocation* JobShare(const v1::JobRecord& job,
                                   const std::string& node) {
  for (const v1::NodeAllocation& share : job.allocation()) {
    if (share.node() == node) return &share;
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<bool> FitStepResources(const v1::JobRecord& job,
                                      const StepResourceAsk& ask,
                                      std::vector<v1::NodeAllocation>& placed,
                                      std::string& busy) {
  const std::map<std::string, NodeHeld> held = HeldByRunningSteps(job);
  std::vector<v1::NodeAllocation> fitted = placed;
  bool fits = true;
  for (v1::NodeAllocation& share : fitted) {
    const v1::NodeAllocation* job_share = JobShare(job, share.node());
    if (job_share == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node ", share.node(), " is not in job ", job.id(), "'s allocation"));
    }
    const uint64_t tasks = share.rank_count();
    const uint64_t cpus_per_task = std::max<uint32_t>(1, ask.cpus_per_task);
    // CPUs: all of the job's on the node, or what the tasks ask for.
    uint64_t cpus = job_share->cpus();
    if (ask.exact) {
      cpus = tasks * cpus_per_task;
      if (job_share->cpus() > 0 && cpus > job_share->cpus()) {
        return absl::InvalidArgumentError(absl::StrCat(
            tasks, " task(s) x ", cpus_per_task, " CPU(s) on ", share.node(),
            " but the job holds ", job_share->cpus(), " CPU(s) there"));
      }
    }
    // GPUs: the ones asked for (per task), all of the job's for a step
    // that is not exact, none for an exact step that asks for none.
    const uint64_t gpus_wanted =
        ask.gpus_per_task > 0 ? tasks * ask.gpus_per_task
        : ask.exact           ? 0
                    : static_cast<uint64_t>(job_share->gpu_indices_size());
    if (gpus_wanted > static_cast<uint64_t>(job_share->gpu_indices_size())) {
      return absl::InvalidArgumentError(
          absl::StrCat(tasks, " task(s) x ", ask.gpus_per_task, " GPU(s) on ",
                       share.node(), " but the job holds ",
                       job_share->gpu_indices_size(), " GPU(s) there"));
    }
    share.set_cpus(static_cast<uint32_t>(cpus));
    share.clear_gpu_indices();
    if (ask.overlap) {
      // Holds nothing, sees what it would have held.
      for (int g = 0; g < static_cast<int>(gpus_wanted); ++g) {
        share.add_gpu_indices(job_share->gpu_indices(g));
      }
      continue;
    }
    auto node_held = held.find(share.node());
    const uint64_t cpus_held =
        node_held == held.end() ? 0 : node_held->second.cpus;
    if (job_share->cpus() > 0 && cpus_held + cpus > job_share->cpus()) {
      fits = false;
      busy = share.node();
      break;
    }
    for (uint32_t gpu : job_share->gpu_indices()) {
      if (static_cast<uint64_t>(share.gpu_indices_size()) >= gpus_wanted) {
        break;
      }
      if (node_held != held.end() && node_held->second.gpus.count(gpu)) {
        continue;
      }
      share.add_gpu_indices(gpu);
    }
    if (static_cast<uint64_t>(share.gpu_indices_size()) < gpus_wanted) {
      fits = false;
      busy = share.node();
      break;
    }
  }
  if (fits) placed = std::move(fitted);
  return fits;
}

}  // namespace gantry
