// Where a `gantry run` step's tasks go inside a running job's allocation,
// and the environment each task starts with. srun's rules, as a newcomer
// from Slurm expects them: the step takes the whole allocation with the
// job's tasks per node unless -N, -n, --ntasks-per-node or -w say
// otherwise. Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/launch/rank_environment.h"
#include "gantry/v1/client.pb.h"
#include "gantry/v1/types.pb.h"

namespace gantry {

// The step's nodes in allocation order, each with its task ids
// (first_rank/rank_count), the job's GPUs there and the CPUs the tasks use.
// INVALID_ARGUMENT saying what does not fit: a node outside the
// allocation, more nodes or tasks than the allocation holds, fewer tasks
// than nodes asked for, GPUs or CPUs per task beyond a node's share.
absl::StatusOr<std::vector<v1::NodeAllocation>> PlaceStep(
    const v1::JobRecord& job, const v1::LaunchStepRequest& request);

// Variables for task `local_task` on the `step_node_index`-th node of
// `step`. The job's batch environment is underneath (Slurm's names for the
// job stay); these give the step's view: SLURM_STEP_*, SLURM_PROCID and
// friends for the step's tasks, the PyTorch names with the step's first
// node as MASTER_ADDR, CUDA_VISIBLE_DEVICES for --gpus-per-task.
std::map<std::string, std::string> BuildStepTaskEnvironment(
    const v1::JobRecord& job, const v1::StepRecord& step,
    uint32_t gpus_per_task, const std::string& master_addr,
    uint32_t step_node_index, uint32_t local_task);

// What every task of a step shares and takes a walk over the job's or the
// step's nodes to make: computed once for a step's launch, not once per
// task (as JobWideEnvironment is for a job's ranks).
struct StepWideEnvironment {
  JobWideEnvironment job;
  std::map<std::string, uint32_t> job_node_index;  // SLURM_NODEID's numbering
  std::string nodelist;                            // SLURM_STEP_NODELIST
  std::string ntasks;                              // SLURM_STEP_NUM_TASKS
  std::string tasks_per_node;                      // SLURM_STEP_TASKS_PER_NODE
};
StepWideEnvironment StepWideEnvironmentOf(const v1::JobRecord& job,
                                          const v1::StepRecord& step);

// As above, with `shared` = StepWideEnvironmentOf(job, step).
std::map<std::string, std::string> BuildStepTaskEnvironment(
    const v1::JobRecord& job, const v1::StepRecord& step,
    const StepWideEnvironment& shared, uint32_t gpus_per_task,
    const std::string& master_addr, uint32_t step_node_index,
    uint32_t local_task);

// The job's tasks (--ntasks, else nodes x --ntasks-per-node) and how many
// land on its `node_index`-th node: block distribution, earlier nodes take
// the extra. The spec must be validated (nodes > 0).
uint32_t JobRankCount(const v1::JobSpec& spec);
uint32_t JobRanksOnNode(const v1::JobSpec& spec, uint32_t node_index);

// The GPUs task `local_task` of a step sees on a node where the step's
// share is `share`: GPUs [i*g, (i+1)*g) of the share with --gpus-per-task=g,
// else all of them.
std::vector<uint32_t> StepTaskGpus(const v1::NodeAllocation& share,
                                   uint32_t gpus_per_task, uint32_t local_task);

// How many of the job's own ranks (the script) run on the `share_index`-th
// node: none for an allocation (srun, salloc); one on the first node for a
// script_once job, none elsewhere; otherwise the share's task count.
uint32_t ScriptRanksOn(const v1::JobRecord& job, int share_index);
// Those ranks over the whole allocation.
uint32_t ScriptRankCount(const v1::JobRecord& job);

// srun's exit status for a finished step: the highest task exit code, or
// 128 + the signal when a task was killed by one (the highest such).
int StepExitCode(const v1::StepRecord& step);

}  // namespace gantry
