// The size of a job submitted with a node range (--nodes=MIN-MAX, Slurm's
// syntax): which node count a placement takes, and when a running elastic
// job (--elastic) is restarted onto more nodes. Pure functions, no state:
// thread-safe, and table-tested apart from the scheduler and controller.
//
// The rules:
// - A placement, first or restart, takes as many nodes as fit now up to
//   MAX, at least MIN ("as many nodes as possible within the range and
//   without delaying the initiation of the job", sbatch(1)). A restart
//   after a lost node therefore takes a replacement when one is free (hot
//   spares first) and otherwise runs on the nodes it still has, down to
//   MIN; below MIN it waits for nodes like a job without a range.
// - Every restart tries MAX again, so a shrunk job is back at its full size
//   at its next restart once nodes have returned.
// - A job that says it can take a change of size at any time (--elastic,
//   a torchrun elastic rendezvous) does not wait for a failure: while it
//   runs below MAX and enough nodes are free to bring it back to MAX (and
//   no job of its partition is waiting for nodes), it is restarted at its
//   next checkpoint, or at once when it has never reported one. A grow
//   that still lands below MAX is not tried again in the attempt it made.
// - Tasks per node stay as at the full size (daemon/launch/step_layout.h
//   JobRanksOnNode lays the tasks out over MAX nodes); the world is the sum
//   over the nodes the attempt got.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

namespace gantry {

struct NodeRange {
  uint32_t min = 1;
  uint32_t max = 1;
  bool IsRange() const { return min < max; }
};

// The range of a job whose full size is `nodes` and whose minimum is
// `min_nodes` (0: no range, the job needs exactly `nodes`).
NodeRange NodeRangeOf(uint32_t nodes, uint32_t min_nodes);

// The largest node count in `range` for which `fits` holds, trying at most
// `capable` nodes (more could never fit), or nullopt when not even MIN fits
// (or capable < MIN). `fits` must be monotonic: when n nodes fit, fewer do
// too. Tries the full size first (the common case on a cluster with room),
// then halves the interval: at most 2 + log2(MAX - MIN) calls.
std::optional<uint32_t> LargestFittingSize(
    NodeRange range, uint32_t capable,
    const std::function<bool(uint32_t)>& fits);

struct GrowInput {
  NodeRange range;
  uint32_t current_nodes = 0;  // the running attempt's allocation
  // Nodes that could take one more node's share of the job now, outside
  // its allocation (hot spares left out: they are kept for failures).
  uint32_t free_nodes = 0;
  bool elastic = false;         // --elastic
  bool others_waiting = false;  // a job of its partition waits for nodes
  bool has_checkpoint = false;  // it has reported a checkpoint before
  // An earlier decision said kAtNextCheckpoint, and a checkpoint newer
  // than the one known then has been recorded since.
  bool checkpoint_since_wait = false;
  // The running attempt is itself a grow that fell short of MAX (what the
  // controller counted free did not hold, e.g. under a --switches limit):
  // no second try in this attempt, so a job never restarts in a loop.
  bool grow_fell_short = false;
};

enum class GrowAction {
  kNone,              // stay at the current size
  kAtNextCheckpoint,  // restart once the job's next checkpoint is recorded
  kNow,               // restart now
};

GrowAction DecideGrow(const GrowInput& input);

}  // namespace gantry
