// The environment each rank starts with: Gantry's own variables, the Slurm
// names existing scripts read, and the PyTorch launcher's, all derived from a
// running job's record. Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "gantry/v1/types.pb.h"

namespace gantry {

// Variables for the `local_rank`-th rank on the `node_index`-th node of the
// job's allocation: all but SLURM_CLUSTER_NAME, the controller's own, which
// the controller adds. `master_addr` is where rank 0's node is reached; the
// job's master_port must already be set. Every rank of the job gets the same
// MASTER_ADDR/MASTER_PORT, WORLD_SIZE and node list.
std::map<std::string, std::string> BuildRankEnvironment(
    const v1::JobRecord& job, const std::string& master_addr,
    uint32_t node_index, uint32_t local_rank);

// The values every rank of a job shares that take a walk over its whole
// allocation to make: computed once for a launch, not once per rank (a
// gang of a thousand nodes made them a thousand times, a million steps
// on the controller's loop).
struct JobWideEnvironment {
  std::string nodelist;  // compressed hostlist
  std::string nnodes;
  std::string ntasks;          // the world size
  std::string tasks_per_node;  // SLURM_TASKS_PER_NODE
  std::string cpus_per_node;   // SLURM_JOB_CPUS_PER_NODE
};
JobWideEnvironment JobWideEnvironmentOf(const v1::JobRecord& job);

// As above, with `shared` = JobWideEnvironmentOf(job).
std::map<std::string, std::string> BuildRankEnvironment(
    const v1::JobRecord& job, const JobWideEnvironment& shared,
    const std::string& master_addr, uint32_t node_index, uint32_t local_rank);

// Slurm's SLURM_TASKS_PER_NODE form: "2(x3),1" for 2,2,2,1.
std::string TasksPerNodeString(const v1::JobRecord& job);

// A port for the job's rendezvous (MASTER_PORT) in 20000-39999, mixed from
// the cluster id, job id and attempt: consecutive jobs and restarts do not
// reuse a port still in TIME_WAIT, and two clusters sharing hosts (test
// clusters on one machine) rarely pick the same port for the same job id.
uint32_t ChooseMasterPort(uint64_t cluster_id, uint64_t job_id,
                          uint32_t attempt);

}  // namespace gantry
