// In-memory checkpoints (--memory-checkpoints; docs/user-guide.md
// "In-memory checkpoints"). The agents keep each rank's snapshots in the
// node's memory and push them to a peer in another failure domain; this
// feature chooses the peers (and tells every node involved, with the job's
// token, whenever the job starts, a node registers or a peer's stream
// ends), learns from the agents' reports which steps are held where
// (memory_checkpoint_ledger.h), records the newest step safe from any one
// domain's loss as the job's memory checkpoint (counted as progress and as
// a checkpoint), and at a restart chooses where each rank's snapshot is
// fetched from before its ranks start (GANTRY_RESTORE_STEP; the launch
// carries the sources). Once the job has ended, durably, every node holding
// its snapshots drops them.
//
// In memory only: the agents report what they hold when they register,
// and a restarted controller makes new tokens and plans.
//
// Threading: the controller's loop thread only (controller_feature.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "daemon/controller/core/controller_feature.h"
#include "daemon/controller/features/memory_checkpoints/memory_checkpoint_ledger.h"

namespace gantry {

class MemoryCheckpointFeature : public ControllerFeature {
 public:
  explicit MemoryCheckpointFeature(FeatureContext& context);

  void OnNodeRegistered(const std::string& node,
                        const v1::Register& registration) override;
  void OnNodeDisconnected(const std::string& node) override;
  void OnHeartbeat(const std::string& node,
                   const v1::Heartbeat& heartbeat) override;
  void OnAgentMessage(const std::string& node,
                      const v1::AgentMessage& message) override;
  void OnJobStarted(const v1::JobRecord& job) override;
  void OnJobFinished(const v1::JobRecord& job) override;
  void FillLaunch(const v1::JobRecord& job, const std::string& node,
                  v1::LaunchRanks& launch) const override;

 private:
  // What this controller keeps of a --memory-checkpoints job between its
  // attempts.
  struct JobPlan {
    // The secret a restore presents to the nodes holding the snapshots (a
    // random 128 bits, as pre-flight's); made once per job.
    std::string token;
    // Each of the job's nodes -> the node it pushes its snapshots to.
    std::map<std::string, std::string> peers;
    // What the attempt running now restores, and from where.
    std::optional<MemoryCheckpointLedger::Restore> restore;
    // The last restore could not fetch its snapshot: the next attempt
    // resumes from the persistent checkpoint, until a newer step is held.
    bool restore_failed = false;
  };

  // A node's report of what it holds (registration, heartbeat).
  void OnReport(const std::string& node,
                const v1::MemoryCheckpointReport& report);
  // The newest step every rank holds in two failure domains: recorded
  // (JobRecord.memory_checkpoint) and counted as a checkpoint.
  void UpdateProtectedStep(const v1::JobRecord& job);
  // At an attempt's start: the snapshot its ranks restore, if one is held
  // on usable nodes and is newer than the persistent checkpoint.
  void ChooseRestore(const v1::JobRecord& job);
  // The job's plan (its peers chosen afresh among the nodes reachable
  // now) to its nodes, their peers and the nodes holding its snapshots.
  void SendPlans(const v1::JobRecord& job);
  // SendPlans for every running job with a plan, or only those
  // `lost_peer` was a peer of.
  void Replan(const std::string* lost_peer);
  // The job ended for good: every node holding its snapshots drops them.
  void Drop(uint64_t job_id);
  void SendDrop(const std::string& node, uint64_t job_id);
  // Whether two nodes share no failure domain (no leaf switch in common;
  // without a switch tree, any two nodes).
  bool Apart(const std::string& a, const std::string& b) const;
  // Whether `node` can hold or serve snapshots: its agent offered a port,
  // is connected, and the node is not down.
  bool CanServe(const std::string& node) const;
  JobPlan& PlanOf(uint64_t job_id);

  FeatureContext& context_;
  MemoryCheckpointLedger ledger_;
  std::map<uint64_t, JobPlan> plans_;
  // The running --memory-checkpoints jobs (a registration replans these,
  // not the whole queue); a job found no longer running leaves it.
  std::set<uint64_t> running_;
  // Each registered node's snapshot port (0: it offers none, with the
  // problem its registration named).
  std::map<std::string, uint32_t> ports_;
};

std::unique_ptr<ControllerFeature> MakeMemoryCheckpointFeature(
    FeatureContext& context);

}  // namespace gantry
