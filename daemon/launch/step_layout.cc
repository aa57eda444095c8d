#include "daemon/launch/step_layout.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/hostlist.h"
#include "common/ids.h"
#include "daemon/launch/rank_environment.h"

namespace gantry {
namespace {

constexpr uint32_t kMaxStepTasks = 1 << 16;

// Task counts per chosen node when the step asks for `ntasks` in all:
// spread evenly (the first nodes take the remainder), at most
// `per_node_cap` on each when that is given.
absl::StatusOr<std::vector<uint32_t>> SpreadTasks(uint32_t ntasks,
                                                  uint32_t nodes,
                                                  uint32_t per_node_cap) {
  if (per_node_cap > 0 && ntasks > uint64_t{per_node_cap} * nodes) {
    return absl::InvalidArgumentError(
        absl::StrCat(ntasks, " tasks do not fit on ", nodes, " node(s) with ",
                     per_node_cap, " task(s) per node"));
  }
  std::vector<uint32_t> counts(nodes, 0);
  for (uint32_t i = 0; i < nodes; ++i) {
    counts[i] = ntasks / nodes + (i < ntasks % nodes ? 1 : 0);
  }
  return counts;
}

}  // namespace

absl::StatusOr<std::vector<v1::NodeAllocation>> PlaceStep(
    const v1::JobRecord& job, const v1::LaunchStepRequest& request) {
  const auto& shares = job.allocation();
  if (shares.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("job ", job.id(), " holds no nodes"));
  }
  // Indices of the chosen shares, in allocation order.
  std::vector<int> chosen;
  if (!request.nodelist().empty()) {
    std::set<std::string> wanted(request.nodelist().begin(),
                                 request.nodelist().end());
    for (const std::string& name : wanted) {
      bool found = std::any_of(
          shares.begin(), shares.end(),
          [&](const v1::NodeAllocation& s) { return s.node() == name; });
      if (!found) {
        std::vector<std::string> names;
        for (const auto& s : shares) names.push_back(s.node());
        return absl::InvalidArgumentError(
            absl::StrCat("node ", name, " is not in job ", job.id(),
                         "'s allocation (", CompressHostlist(names), ")"));
      }
    }
    for (int i = 0; i < shares.size(); ++i) {
      if (wanted.count(shares[i].node())) chosen.push_back(i);
    }
  }
  const uint32_t allocated = static_cast<uint32_t>(shares.size());
  const bool nodes_given = request.nodes() > 0;
  if (nodes_given) {
    if (request.nodes() > allocated) {
      return absl::InvalidArgumentError(
          absl::StrCat("the step asks for ", request.nodes(), " nodes; job ",
                       job.id(), " has ", allocated));
    }
    if (!chosen.empty() && request.nodes() < chosen.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--nodelist names ", chosen.size(),
                       " nodes but --nodes is ", request.nodes()));
    }
    // -w plus a larger -N: the named nodes and then others, as srun does.
    for (int i = 0; i < shares.size(); ++i) {
      if (chosen.size() >= request.nodes()) break;
      if (std::find(chosen.begin(), chosen.end(), i) == chosen.end()) {
        chosen.push_back(i);
      }
    }
    std::sort(chosen.begin(), chosen.end());  // allocation order
  } else if (chosen.empty()) {
    for (int i = 0; i < shares.size(); ++i) chosen.push_back(i);
  }

  std::vector<uint32_t> counts;
  if (request.ntasks() > 0) {
    if (request.ntasks() > kMaxStepTasks) {
      return absl::InvalidArgumentError(
          absl::StrCat("a step runs at most ", kMaxStepTasks, " tasks, not ",
                       request.ntasks()));
    }
    if (request.ntasks() < chosen.size()) {
      if (nodes_given || !request.nodelist().empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--ntasks=", request.ntasks(), " is fewer than the ", chosen.size(),
            " nodes asked for; every node needs a task"));
      }
      chosen.resize(request.ntasks());  // fewer tasks than nodes: fewer nodes
    }
    if (request.ntasks_per_node() > 0 && !nodes_given &&
        request.nodelist().empty()) {
      // -n with --ntasks-per-node: as few nodes as hold them.
      const uint32_t needed =
          (request.ntasks() + request.ntasks_per_node() - 1) /
          request.ntasks_per_node();
      if (needed < chosen.size()) chosen.resize(needed);
    }
    absl::StatusOr<std::vector<uint32_t>> spread =
        SpreadTasks(request.ntasks(), static_cast<uint32_t>(chosen.size()),
                    request.ntasks_per_node());
    if (!spread.ok()) return spread.status();
    counts = *std::move(spread);
  } else {
    for (int index : chosen) {
      uint32_t count = request.ntasks_per_node() > 0
                           ? request.ntasks_per_node()
                           : std::max<uint32_t>(1, shares[index].rank_count());
      counts.push_back(count);
    }
  }

  std::vector<v1::NodeAllocation> placed;
  uint32_t next_task = 0;
  for (size_t i = 0; i < chosen.size(); ++i) {
    const v1::NodeAllocation& share = shares[chosen[i]];
    const uint32_t tasks = counts[i];
    if (tasks == 0) continue;
    if (request.gpus_per_task() > 0 &&
        uint64_t{tasks} * request.gpus_per_task() >
            static_cast<uint64_t>(share.gpu_indices_size())) {
      return absl::InvalidArgumentError(
          absl::StrCat(tasks, " task(s) x ", request.gpus_per_task(),
                       " GPU(s) on ", share.node(), " but the job holds ",
                       share.gpu_indices_size(), " GPU(s) there"));
    }
    if (request.cpus_per_task() > 0 && share.cpus() > 0 &&
        uint64_t{tasks} * request.cpus_per_task() > share.cpus()) {
      return absl::InvalidArgumentError(absl::StrCat(
          tasks, " task(s) x ", request.cpus_per_task(), " CPU(s) on ",
          share.node(), " but the job holds ", share.cpus(), " CPU(s) there"));
    }
    v1::NodeAllocation step_share;
    step_share.set_node(share.node());
    step_share.set_first_rank(next_task);
    step_share.set_rank_count(tasks);
    step_share.set_cpus(request.cpus_per_task() > 0
                            ? tasks * request.cpus_per_task()
                            : share.cpus());
    step_share.set_mem_mb(share.mem_mb());
    *step_share.mutable_gpu_indices() = share.gpu_indices();
    next_task += tasks;
    if (next_task > kMaxStepTasks) {
      return absl::InvalidArgumentError(
          absl::StrCat("a step runs at most ", kMaxStepTasks, " tasks"));
    }
    placed.push_back(std::move(step_share));
  }
  return placed;
}

StepWideEnvironment StepWideEnvironmentOf(const v1::JobRecord& job,
                                          const v1::StepRecord& step) {
  StepWideEnvironment shared;
  shared.job = JobWideEnvironmentOf(job);
  for (int i = 0; i < job.allocation_size(); ++i) {
    shared.job_node_index[job.allocation(i).node()] = static_cast<uint32_t>(i);
  }
  std::vector<std::string> names;
  names.reserve(step.nodes_size());
  uint32_t tasks = 0;
  std::vector<std::string> per_node;
  for (const v1::NodeAllocation& s : step.nodes()) {
    names.push_back(s.node());
    tasks += s.rank_count();
    per_node.push_back(absl::StrCat(s.rank_count()));
  }
  shared.nodelist = CompressHostlist(names);
  shared.ntasks = absl::StrCat(tasks);
  shared.tasks_per_node = absl::StrJoin(per_node, ",");
  return shared;
}

std::map<std::string, std::string> BuildStepTaskEnvironment(
    const v1::JobRecord& job, const v1::StepRecord& step,
    uint32_t gpus_per_task, const std::string& master_addr,
    uint32_t step_node_index, uint32_t local_task) {
  return BuildStepTaskEnvironment(job, step, StepWideEnvironmentOf(job, step),
                                  gpus_per_task, master_addr, step_node_index,
                                  local_task);
}

std::map<std::string, std::string> BuildStepTaskEnvironment(
    const v1::JobRecord& job, const v1::StepRecord& step,
    const StepWideEnvironment& shared, uint32_t gpus_per_task,
    const std::string& master_addr, uint32_t step_node_index,
    uint32_t local_task) {
  const v1::NodeAllocation& share =
      step.nodes(static_cast<int>(step_node_index));
  // The node's place in the job (SLURM_NODEID is the job's numbering).
  const auto in_job = shared.job_node_index.find(share.node());
  const uint32_t job_node_index =
      in_job == shared.job_node_index.end() ? 0 : in_job->second;
  std::map<std::string, std::string> env =
      BuildRankEnvironment(job, shared.job, master_addr, job_node_index, 0);
  const std::string& nodelist = shared.nodelist;
  const std::string task = absl::StrCat(share.first_rank() + local_task);
  const std::string& ntasks = shared.ntasks;
  const std::string local = absl::StrCat(local_task);
  const std::string local_size = absl::StrCat(share.rank_count());
  const std::string node_rank = absl::StrCat(step_node_index);
  const std::string step_id = absl::StrCat(SlurmStepNumber(step.id()));
  std::map<std::string, std::string> step_env = {
      {"GANTRY_STEP_ID", step_id},
      {"GANTRY_RANK", task},
      {"GANTRY_LOCAL_RANK", local},
      {"GANTRY_NODE_RANK", node_rank},
      {"GANTRY_NTASKS", ntasks},
      {"SLURM_STEP_ID", step_id},
      {"SLURM_STEPID", step_id},
      {"SLURM_STEP_NODELIST", nodelist},
      {"SLURM_STEP_NUM_NODES", absl::StrCat(step.nodes_size())},
      {"SLURM_STEP_NUM_TASKS", ntasks},
      {"SLURM_STEP_TASKS_PER_NODE", shared.tasks_per_node},
      {"SLURM_NTASKS", ntasks},
      {"SLURM_NPROCS", ntasks},
      {"SLURM_PROCID", task},
      {"SLURM_LOCALID", local},
      {"SLURM_NODEID", absl::StrCat(job_node_index)},
      {"SLURM_CPUS_ON_NODE", absl::StrCat(share.cpus())},
      {"SLURM_NTASKS_PER_NODE", local_size},
      {"MASTER_ADDR", master_addr},
      {"WORLD_SIZE", ntasks},
      {"RANK", task},
      {"LOCAL_RANK", local},
      {"LOCAL_WORLD_SIZE", local_size},
      {"GROUP_RANK", node_rank},
      {"NODE_RANK", node_rank},
  };
  for (auto& [key, value] : step_env) env[key] = std::move(value);
  if (gpus_per_task > 0) {
    const std::string visible =
        absl::StrJoin(StepTaskGpus(share, gpus_per_task, local_task), ",");
    env["CUDA_VISIBLE_DEVICES"] = visible;
    env["SLURM_STEP_GPUS"] = visible;
    env["GPU_DEVICE_ORDINAL"] = visible;
  }
  return env;
}

std::vector<uint32_t> StepTaskGpus(const v1::NodeAllocation& share,
                                   uint32_t gpus_per_task,
                                   uint32_t local_task) {
  if (gpus_per_task == 0) {
    return {share.gpu_indices().begin(), share.gpu_indices().end()};
  }
  std::vector<uint32_t> gpus;
  for (uint32_t g = 0; g < gpus_per_task; ++g) {
    const uint64_t index = uint64_t{local_task} * gpus_per_task + g;
    if (index < static_cast<uint64_t>(share.gpu_indices_size())) {
      gpus.push_back(share.gpu_indices(static_cast<int>(index)));
    }
  }
  return gpus;
}

uint32_t JobRankCount(const v1::JobSpec& spec) {
  return spec.ntasks() ? spec.ntasks() : spec.nodes() * spec.ntasks_per_node();
}

uint32_t JobRanksOnNode(const v1::JobSpec& spec, uint32_t node_index) {
  const uint32_t total = JobRankCount(spec);
  const uint32_t base = total / spec.nodes();
  return base + (node_index < total % spec.nodes() ? 1 : 0);
}

uint32_t ScriptRanksOn(const v1::JobRecord& job, int share_index) {
  if (job.spec().allocation_only()) return 0;
  if (job.spec().script_once()) return share_index == 0 ? 1 : 0;
  return job.allocation(share_index).rank_count();
}

uint32_t ScriptRankCount(const v1::JobRecord& job) {
  uint32_t count = 0;
  for (int i = 0; i < job.allocation_size(); ++i) {
    count += ScriptRanksOn(job, i);
  }
  return count;
}

int StepExitCode(const v1::StepRecord& step) {
  int code = 0;
  int signal = 0;
  for (const v1::RankExit& exit : step.exits()) {
    code = std::max(code, exit.exit_code());
    signal = std::max(signal, exit.signal());
  }
  return signal > 0 ? std::max(code, 128 + signal) : code;
}

}  // namespace gantry
