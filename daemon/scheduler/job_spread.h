// How many nodes a job takes when it does not say -N, as Slurm picks it:
// -n N packs as many tasks on a node as the partition's largest node has
// CPUs for; -G/--gpus=G takes as few nodes as the partition's largest GPU
// node (of the asked type) can hold G on. With -N given, --gpus is spread
// evenly over those nodes. The controller applies it at submission, before
// the job is queued, so the scheduler places a fixed per-node shape.
//
// Pure functions, thread-safe (no state).
#pragma once

#include <cstdint>

#include "daemon/scheduler/scheduler_types.h"

namespace gantry {

// The largest nodes a job could use, by what matters for spreading.
class LargestNodes {
 public:
  // Counts `node` if it serves `job` (partition, spare rule); its GPUs only
  // if they are of the job's GPU type (when it names one).
  void Add(const NodeSnapshot& node, const PendingJob& job);
  uint32_t cpus() const { return cpus_; }
  uint32_t gpus() const { return gpus_; }

 private:
  uint32_t cpus_ = 0;
  uint32_t gpus_ = 0;
};

// A job's request as submitted; a 0 count is "not given".
struct SpreadRequest {
  uint32_t nodes = 0;            // -N
  uint32_t ntasks = 0;           // -n
  uint32_t ntasks_per_node = 0;  // --ntasks-per-node
  uint32_t cpus_per_task = 1;    // -c
  uint32_t gpus = 0;             // -G/--gpus, for the whole job
  uint32_t gpus_per_node = 0;    // --gpus-per-node, --gres=gpu:N
};

// What the job takes on each node once spread.
struct JobSpread {
  uint32_t nodes = 1;
  uint32_t ntasks_per_node = 1;
  uint32_t gpus_per_node = 0;
  // --gpus=G over `nodes` nodes when G is not a multiple of it: each node
  // holds ceil(G / nodes) (Slurm may hold G unevenly; Gantry's placement is
  // the same on every node, so the job gets a few more).
  bool gpus_rounded_up = false;
};

// No -N: the fewest nodes that hold the tasks (by the largest node's CPUs)
// and the GPUs (by the largest node's GPUs), whichever needs more; at
// least 1, at most `max_nodes`. With no node known (`largest` empty) the
// request stays on one node unless it says otherwise. --ntasks-per-node
// given without -N: as many nodes as -n needs at that rate.
JobSpread SpreadJob(const SpreadRequest& request, const LargestNodes& largest,
                    uint32_t max_nodes);

}  // namespace gantry
