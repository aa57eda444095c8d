// The agent protocol of the controller's core: registration (and who may
// hold a node's name), reconciliation of the ranks an agent runs with what
// the controller placed there, rank and step-task events, checkpoint
// reports, heartbeats (health, ports, sstat's usage), and a stream's end.
// An agent that reports on ranks it does not hold has its stream cut. What
// agents did not say in time is the tick's: node_silence.h for the nodes,
// job_timers.h for the jobs.
//
// Threading: the controller's loop only.
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "common/clock.h"
#include "daemon/controller/core/agent_link.h"
#include "daemon/controller/core/cluster_state.h"
#include "daemon/controller/core/commit_pipeline.h"
#include "daemon/controller/core/controller_feature.h"
#include "daemon/controller/core/controller_options.h"
#include "daemon/controller/core/job_lifecycle.h"
#include "daemon/controller/core/job_steps.h"
#include "daemon/controller/core/node_administration.h"
#include "daemon/controller/core/pass_pacer.h"
#include "daemon/controller/core/switch_tree.h"
#include "gantry/v1/agent.pb.h"

namespace gantry {

class AgentProtocol {
 public:
  // What it works with; every reference outlives it.
  struct Parts {
    const Clock& clock;
    const ControllerOptions& options;
    ClusterState& state;
    CommitPipeline& commits;
    PassPacer& passes;
    JobLifecycle& lifecycle;
    JobSteps& steps;
    NodeAdministration& nodes;
    SwitchTree& switch_tree;  // a fabric dump is matched by HCA GUIDs
    const FeatureList& features;
  };
  explicit AgentProtocol(Parts parts);
  AgentProtocol(const AgentProtocol&) = delete;
  AgentProtocol& operator=(const AgentProtocol&) = delete;

  void OnAgentMessage(const std::shared_ptr<AgentLink>& link,
                      const v1::AgentMessage& message);
  // `why`: the reason the stream was cut (agent_stream_guard.h); empty
  // when it simply ended.
  void OnAgentGone(const std::shared_ptr<AgentLink>& link,
                   const std::string& why = "");

 private:
  // How a registering agent relates to the node's last registration.
  enum class AgentContinuity {
    kSameAgent,       // the same process redialled: it has all it was sent
    kAgentRestarted,  // a new agent process, same boot: its ranks died
    kNodeRebooted,    // the node itself restarted
  };
  void OnRegister(const std::shared_ptr<AgentLink>& link,
                  const v1::Register& reg);
  void OnRankEvent(const std::string& node, const v1::RankEvent& event);
  void OnHealth(NodeRuntime& node, const v1::Heartbeat& heartbeat);
  void OnCheckpointReport(const std::string& node,
                          const v1::CheckpointReport& report);
  // sstat: keeps a heartbeat's measurements of the running attempts this
  // node holds a share of; others are dropped.
  void RecordUsage(const std::string& node, const v1::Heartbeat& heartbeat);
  void ReconcileRanks(const std::string& node, const v1::Register& reg,
                      AgentContinuity continuity);
  // Ranks of the job's current attempt that the registering agent neither
  // runs nor saw exit: re-sent when the launch never reached it, restarted
  // uncharged when the agent restarted, a node fault (drain) only when the
  // node rebooted.
  void OnLostRanks(JobRuntime& job, const std::string& node,
                   const std::string& ranks, AgentContinuity continuity);
  // INVALID_ARGUMENT when `node` cannot hold `rank`: an attempt of its job
  // that never started, or a rank (or step task) of the current attempt
  // placed on another node. A rank of a job or step no longer known, or of
  // an earlier attempt, is not judged (a late report is normal).
  absl::Status CheckRankHeld(const std::string& node,
                             const v1::RankId& rank) const;
  // Ends a stream whose agent broke the protocol; its node is then
  // unreachable like any whose stream ended.
  void CutAgent(const std::shared_ptr<AgentLink>& link, const std::string& node,
                const absl::Status& why);
  // An attempt that ended with an application failure moments before its
  // node's stream closed is the node's fault.
  void ReclassifyRecentFailures(const std::string& node_name);

  Parts parts_;
};

}  // namespace gantry
