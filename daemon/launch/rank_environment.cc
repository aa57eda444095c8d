#include "daemon/launch/rank_environment.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/cluster_name.h"
#include "common/hostlist.h"
#include "common/job_restarts.h"

namespace gantry {

namespace {

// Slurm's per-node count lists: "4(x2),2" for 4, 4, 2.
template <typename CountOf>
std::string PerNodeCounts(const v1::JobRecord& job, CountOf count_of) {
  std::vector<std::string> parts;
  const auto& shares = job.allocation();
  for (int i = 0; i < shares.size();) {
    int run = 1;
    while (i + run < shares.size() &&
           count_of(shares[i + run]) == count_of(shares[i])) {
      ++run;
    }
    parts.push_back(run > 1 ? absl::StrCat(count_of(shares[i]), "(x", run, ")")
                            : absl::StrCat(count_of(shares[i])));
    i += run;
  }
  return absl::StrJoin(parts, ",");
}

}  // namespace

std::string TasksPerNodeString(const v1::JobRecord& job) {
  return PerNodeCounts(
      job, [](const v1::NodeAllocation& share) { return share.rank_count(); });
}

uint32_t ChooseMasterPort(uint64_t cluster_id, uint64_t job_id,
                          uint32_t attempt) {
  // splitmix64 finaliser: every input bit moves the result.
  uint64_t x =
      cluster_id ^ (job_id * 0x9E3779B97F4A7C15ULL) ^ (uint64_t{attempt} << 48);
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  x ^= x >> 31;
  return 20000 + static_cast<uint32_t>(x % 20000);
}

JobWideEnvironment JobWideEnvironmentOf(const v1::JobRecord& job) {
  std::vector<std::string> node_names;
  node_names.reserve(job.allocation_size());
  uint32_t world_size = 0;
  for (const v1::NodeAllocation& a : job.allocation()) {
    node_names.push_back(a.node());
    world_size += a.rank_count();
  }
  JobWideEnvironment shared;
  shared.nodelist = CompressHostlist(node_names);
  shared.nnodes = absl::StrCat(job.allocation_size());
  shared.ntasks = absl::StrCat(world_size);
  shared.tasks_per_node = TasksPerNodeString(job);
  shared.cpus_per_node =
      PerNodeCounts(job, [](const v1::NodeAllocation& a) { return a.cpus(); });
  return shared;
}

std::map<std::string, std::string> BuildRankEnvironment(
    const v1::JobRecord& job, const std::string& master_addr,
    uint32_t node_index, uint32_t local_rank) {
  return BuildRankEnvironment(job, JobWideEnvironmentOf(job), master_addr,
                              node_index, local_rank);
}

std::map<std::string, std::string> BuildRankEnvironment(
    const v1::JobRecord& job, const JobWideEnvironment& shared,
    const std::string& master_addr, uint32_t node_index, uint32_t local_rank) {
  const v1::JobSpec& spec = job.spec();
  const v1::NodeAllocation& share =
      job.allocation(static_cast<int>(node_index));
  const std::string& nodelist = shared.nodelist;
  const std::string job_id = absl::StrCat(job.id());
  const std::string rank = absl::StrCat(share.first_rank() + local_rank);
  const std::string& nnodes = shared.nnodes;
  const std::string& ntasks = shared.ntasks;
  const std::string local = absl::StrCat(local_rank);
  const std::string local_size = absl::StrCat(share.rank_count());
  const std::string node_rank = absl::StrCat(node_index);
  const std::string restarts = absl::StrCat(JobRestartCount(job));
  // Slurm's SLURM_GTIDS: the global ranks on this node, "4,5,6,7".
  std::vector<std::string> node_ranks;
  for (uint32_t r = 0; r < share.rank_count(); ++r) {
    node_ranks.push_back(absl::StrCat(share.first_rank() + r));
  }
  std::vector<std::string> gpu_strings;
  for (uint32_t gpu : share.gpu_indices())
    gpu_strings.push_back(absl::StrCat(gpu));
  const std::string gpus = absl::StrJoin(gpu_strings, ",");

  std::map<std::string, std::string> env = {
      // Gantry's own.
      {"GANTRY_JOB_ID", job_id},
      {"GANTRY_JOB_NAME", spec.name()},
      {"GANTRY_NODELIST", nodelist},
      {"GANTRY_NNODES", nnodes},
      {"GANTRY_NTASKS", ntasks},
      {"GANTRY_RANK", rank},
      {"GANTRY_LOCAL_RANK", local},
      {"GANTRY_NODE_RANK", node_rank},
      {"GANTRY_ATTEMPT", absl::StrCat(job.attempt())},
      {"GANTRY_RESTART_COUNT", restarts},
      {"GANTRY_NODENAME", share.node()},
      {"GANTRY_SUBMIT_DIR", spec.submit_dir()},
      // The Slurm names scripts already read.
      {"SLURM_JOB_ID", job_id},
      {"SLURM_JOBID", job_id},
      {"SLURM_JOB_QOS", spec.qos().empty() ? kDefaultQos : spec.qos()},
      {"SLURM_JOB_NAME", spec.name()},
      {"SLURM_JOB_NODELIST", nodelist},
      {"SLURM_NODELIST", nodelist},
      {"SLURM_JOB_NUM_NODES", nnodes},
      {"SLURM_NNODES", nnodes},
      {"SLURM_NTASKS", ntasks},
      {"SLURM_NPROCS", ntasks},
      {"SLURM_TASKS_PER_NODE", shared.tasks_per_node},
      {"SLURM_NTASKS_PER_NODE", local_size},
      {"SLURM_CPUS_PER_TASK", absl::StrCat(spec.cpus_per_task())},
      {"SLURM_CPUS_ON_NODE", absl::StrCat(share.cpus())},
      {"SLURM_PROCID", rank},
      {"SLURM_LOCALID", local},
      {"SLURM_GTIDS", absl::StrJoin(node_ranks, ",")},
      {"SLURM_NODEID", node_rank},
      {"SLURMD_NODENAME", share.node()},
      {"SLURM_JOB_PARTITION", spec.partition()},
      {"SLURM_SUBMIT_DIR", spec.submit_dir()},
      {"SLURM_JOB_USER", job.user()},
      {"SLURM_JOB_UID", absl::StrCat(job.uid())},
      {"SLURM_RESTART_COUNT", restarts},
      {"SLURM_GPUS_ON_NODE", absl::StrCat(share.gpu_indices_size())},
      {"SLURM_JOB_CPUS_PER_NODE", shared.cpus_per_node},
      // The PyTorch launcher's (torchrun / torch.distributed env://).
      {"MASTER_ADDR", master_addr},
      {"MASTER_PORT", absl::StrCat(job.master_port())},
      {"WORLD_SIZE", ntasks},
      {"RANK", rank},
      {"LOCAL_RANK", local},
      {"LOCAL_WORLD_SIZE", local_size},
      {"GROUP_RANK", node_rank},
      {"NODE_RANK", node_rank},
  };
  if (job.array_job_id() != 0) {
    // A task of a job array (--array): its index and the array's shape.
    const v1::JobArrayInfo& array = job.array();
    const std::pair<const char*, std::string> values[] = {
        {"JOB_ID", absl::StrCat(job.array_job_id())},
        {"TASK_ID", absl::StrCat(job.array_task_id())},
        {"TASK_COUNT", absl::StrCat(array.task_count())},
        {"TASK_MIN", absl::StrCat(array.min_task_id())},
        {"TASK_MAX", absl::StrCat(array.max_task_id())},
        {"TASK_STEP", absl::StrCat(array.step())},
    };
    for (const auto& [name, value] : values) {
      env[absl::StrCat("SLURM_ARRAY_", name)] = value;
      env[absl::StrCat("GANTRY_ARRAY_", name)] = value;
    }
  }
  if (!spec.dependency().empty()) {
    env["SLURM_JOB_DEPENDENCY"] = spec.dependency();
  }
  // Unset when the job has none, as Slurm leaves it.
  if (!spec.account().empty()) env["SLURM_JOB_ACCOUNT"] = spec.account();
  if (!spec.checkpoint_dir().empty()) {
    env["GANTRY_CHECKPOINT_DIR"] = spec.checkpoint_dir();
  }
  if (spec.gpus_per_node() > 0) {
    env["SLURM_GPUS_PER_NODE"] = absl::StrCat(spec.gpus_per_node());
  }
  if (spec.mem_per_node_mb() > 0) {
    env["SLURM_MEM_PER_NODE"] = absl::StrCat(spec.mem_per_node_mb());
  }
  // Where a restarted attempt resumes from: the latest checkpoint Gantry
  // knows of (empty on a first attempt or when there is none yet).
  env["GANTRY_RESUME_FROM"] = job.latest_checkpoint().path();
  if (!job.latest_checkpoint().path().empty()) {
    env["GANTRY_RESUME_STEP"] = absl::StrCat(job.latest_checkpoint().step());
  }
  // --memory-checkpoints: the snapshot every rank finds restored in its
  // GANTRY_MEMORY_CHECKPOINT_DIR before it starts (newer than the
  // persistent checkpoint above, which is then the fallback).
  if (job.has_memory_restore_step()) {
    env["GANTRY_RESTORE_STEP"] = absl::StrCat(job.memory_restore_step());
  }
  // Training seconds between checkpoints that maximize the job's goodput
  // (daemon/controller/features/checkpoint_interval/); unset: none.
  if (job.checkpoint_interval_seconds() > 0) {
    env["GANTRY_CHECKPOINT_INTERVAL"] =
        absl::StrCat(static_cast<int64_t>(job.checkpoint_interval_seconds()));
  }
  if (spec.time_limit_seconds() > 0) {
    env["GANTRY_TIME_LIMIT_SECONDS"] = absl::StrCat(spec.time_limit_seconds());
  }
  if (share.gpu_indices_size() > 0) {
    // Every rank on a node sees the node's allocated GPUs and picks its own
    // with LOCAL_RANK, as torchrun and Slurm's --gpus-per-node do.
    env["CUDA_VISIBLE_DEVICES"] = gpus;
    // Gantry numbers GPUs in PCI bus order; make CUDA number them the same
    // way (its default puts the fastest first).
    env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
    env["SLURM_JOB_GPUS"] = gpus;
    env["GPU_DEVICE_ORDINAL"] = gpus;
  } else {
    // No GPUs allocated: hide any the node has rather than share them.
    env["CUDA_VISIBLE_DEVICES"] = "";
  }
  return env;
}

}  // namespace gantry
