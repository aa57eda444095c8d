#include "daemon/scheduler.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"

namespace gantry {
namespace {

bool InPartition(const NodeSnapshot& node, const std::string& partition) {
  return std::find(node.partitions.begin(), node.partitions.end(), partition) !=
         node.partitions.end();
}

// Nodes the job may use at all: spares only serve restarts.
bool Usable(const NodeSnapshot& node, const PendingJob& job) {
  return InPartition(node, job.partition) &&
         (!node.hot_spare || job.is_restart);
}

uint32_t CpusNeeded(const PendingJob& job) {
  return job.max_tasks_per_node * job.cpus_per_task;
}

// Could this node ever hold one node's share of the job, if it were idle?
bool FitsWhenIdle(const NodeSnapshot& node, const PendingJob& job) {
  return node.cpus_total >= CpusNeeded(job) &&
         node.gpus_total >= job.gpus_per_node &&
         (job.mem_per_node_mb == 0 || node.mem_total_mb >= job.mem_per_node_mb);
}

bool FitsNow(const NodeSnapshot& node, uint32_t cpus_free, uint64_t mem_free,
             std::size_t gpus_free, const PendingJob& job) {
  return node.schedulable && cpus_free >= CpusNeeded(job) &&
         gpus_free >= job.gpus_per_node &&
         (job.mem_per_node_mb == 0 || mem_free >= job.mem_per_node_mb);
}

std::string Describe(const PendingJob& job) {
  return absl::StrCat(
      job.nodes, " node(s) with ", CpusNeeded(job), " CPUs",
      job.gpus_per_node ? absl::StrCat(", ", job.gpus_per_node, " GPUs") : "",
      job.mem_per_node_mb ? absl::StrCat(", ", job.mem_per_node_mb, " MB") : "",
      " each");
}

}  // namespace

ScheduleResult Schedule(const std::vector<NodeSnapshot>& nodes,
                        const std::vector<PendingJob>& queue) {
  ScheduleResult result;
  // Free resources as this pass hands them out.
  std::vector<uint32_t> cpus_free(nodes.size());
  std::vector<uint64_t> mem_free(nodes.size());
  std::vector<std::vector<uint32_t>> gpus_free(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    cpus_free[i] = nodes[i].cpus_free;
    mem_free[i] = nodes[i].mem_free_mb;
    gpus_free[i] = nodes[i].free_gpus;
  }
  std::set<std::string> blocked_partitions;

  for (const PendingJob& job : queue) {
    std::size_t capable = 0;
    for (const NodeSnapshot& node : nodes) {
      if (Usable(node, job) && FitsWhenIdle(node, job)) ++capable;
    }
    if (capable < job.nodes) {
      result.waits.push_back(
          {job.id, "PartitionNodeLimit",
           absl::StrCat("needs ", Describe(job), "; partition ", job.partition,
                        " has ", capable, " such node(s)")});
      continue;
    }
    if (blocked_partitions.count(job.partition)) {
      result.waits.push_back(
          {job.id, "Priority", "waiting behind a higher-priority job"});
      continue;
    }
    std::vector<std::size_t> chosen;
    // A restart looks at spares first (pass 0), then at the rest.
    for (int pass = job.is_restart ? 0 : 1; pass < 2; ++pass) {
      for (std::size_t i = 0; i < nodes.size() && chosen.size() < job.nodes;
           ++i) {
        if (nodes[i].hot_spare != (pass == 0)) continue;
        if (Usable(nodes[i], job) &&
            FitsNow(nodes[i], cpus_free[i], mem_free[i], gpus_free[i].size(),
                    job)) {
          chosen.push_back(i);
        }
      }
    }
    if (chosen.size() < job.nodes) {
      blocked_partitions.insert(job.partition);
      result.waits.push_back(
          {job.id, "Resources",
           absl::StrCat("needs ", Describe(job), "; ", chosen.size(),
                        " node(s) free now")});
      continue;
    }
    JobStart start{job.id, {}};
    for (std::size_t i : chosen) {
      NodeShare share{i, CpusNeeded(job), {}, job.mem_per_node_mb};
      share.gpus.assign(gpus_free[i].begin(),
                        gpus_free[i].begin() + job.gpus_per_node);
      gpus_free[i].erase(gpus_free[i].begin(),
                         gpus_free[i].begin() + job.gpus_per_node);
      cpus_free[i] -= share.cpus;
      mem_free[i] -= std::min(mem_free[i], share.mem_mb);
      start.shares.push_back(std::move(share));
    }
    result.starts.push_back(std::move(start));
  }
  return result;
}

}  // namespace gantry
