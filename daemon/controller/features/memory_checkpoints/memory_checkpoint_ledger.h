// What the controller knows of jobs' in-memory checkpoints (docs/user-guide.md
// "In-memory checkpoints"): which node holds which rank's snapshot of which
// step, its own or a replica, as the agents last reported; and the
// decisions made from it:
//  - the peers: each node of a job pushes its ranks' snapshots to a node in
//    another failure domain (no leaf switch in common; without a switch
//    tree, any other node), preferring the job's own nodes, then the
//    least-loaded others;
//  - the protected step: the newest step every rank of the job holds on
//    two nodes in different failure domains, so that losing any one domain
//    leaves a copy (what goodput counts as a checkpoint);
//  - the restore: at a restart, the newest step every rank holds on usable
//    nodes, and where each rank's copy comes from. Rank R goes to the node
//    that now takes the place (the index in the allocation) of the node
//    that ran it, so a launch on the same shape finds each rank's snapshot
//    on the node that runs it (srun's block layout is the same on the same
//    shape).
// A step counts only when every rank of the job's world (0 .. world-1, the
// most tasks the job ran at once: its script's ranks or its largest srun
// step) holds it: a rank whose node has not reported yet must not be taken
// for one that wrote nothing, or a restart would restore some ranks and not
// others.
//
// In memory only: agents report what they hold when they register.
// Thread-compatible (the controller's loop).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gantry/v1/agent.pb.h"

namespace gantry {

class MemoryCheckpointLedger {
 public:
  // Replaces what `node` holds. Returns the jobs whose holdings changed.
  std::set<uint64_t> Report(const std::string& node,
                            const v1::MemoryCheckpointReport& report);
  // Forgets a job (it ended; its nodes were told to drop it).
  void Forget(uint64_t job);

  // What is held of `job`, for messages: "rank 0: step 3 on a1, b1 (replica);
  // rank 1: ..." ("nothing" when nothing is).
  std::string Describe(uint64_t job) const;

  // The nodes holding anything of `job`.
  std::set<std::string> HoldersOf(uint64_t job) const;
  // The jobs anything is held of on `node`.
  std::set<uint64_t> JobsOn(const std::string& node) const;

  // Whether two nodes share no failure domain.
  using Apart = std::function<bool(const std::string&, const std::string&)>;
  // The newest step every rank of `job`'s `world` holds on two nodes that
  // are `apart`; nullopt when there is none.
  std::optional<int64_t> ProtectedStep(uint64_t job, uint32_t world,
                                       const Apart& apart) const;

  struct RankSource {
    uint32_t rank = 0;
    std::string holder;  // the node to fetch it from (maybe `node` itself)
  };
  struct Restore {
    int64_t step = 0;
    // New node -> the ranks it restores, and from where.
    std::map<std::string, std::vector<RankSource>> by_node;
  };
  // The restore for a restart from `old_nodes` (the attempt that ended, in
  // allocation order) onto `new_nodes` (same count), from nodes `usable`
  // says may serve; nullopt when some rank's snapshot at every step is
  // only on unusable nodes, the shapes differ, or nothing is held.
  std::optional<Restore> PlanRestore(
      uint64_t job, uint32_t world, const std::vector<std::string>& old_nodes,
      const std::vector<std::string>& new_nodes,
      const std::function<bool(const std::string&)>& usable) const;

  // A new random token (128 bits, as hex) for a job's plan: the secret
  // a restore presents to the nodes holding its snapshots.
  std::string NewToken();

 private:
  // job -> rank -> step -> node -> whether the node holds a replica.
  using Holders = std::map<std::string, bool>;
  using Steps = std::map<int64_t, Holders>;
  std::map<uint64_t, std::map<uint32_t, Steps>> held_;
  // What is held of `job`'s ranks 0 .. world-1; null when some rank has
  // nothing.
  const std::map<uint32_t, Steps>* WholeWorld(uint64_t job,
                                              uint32_t world) const;
  std::map<std::string, std::set<uint64_t>> jobs_by_node_;
  std::mt19937_64 random_{std::random_device{}()};
};

// The peer each of `job_nodes` pushes its snapshots to: a node of
// `candidates` (nodes that can hold snapshots, in a stable order) `apart`
// from it, the job's own nodes first, then those given fewest so far;
// without one apart, another node. A node left out has no peer.
std::map<std::string, std::string> ChooseMemoryCheckpointPeers(
    const std::vector<std::string>& job_nodes,
    const std::vector<std::string>& candidates,
    const MemoryCheckpointLedger::Apart& apart);

}  // namespace gantry
