// Per-node progress of one running job attempt, and its stragglers: what
// the controller keeps in memory from the agents' progress reports (each
// node's ranks, aggregated by its agent) and from `gantry progress` run by
// single ranks. One entry per node, so a large job costs the controller
// its node count, not its rank count.
//
// Thread-compatible: owned by the controller's loop.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "daemon/scheduler/straggler_detector.h"
#include "gantry/v1/types.pb.h"

namespace gantry {

class JobProgress {
 public:
  explicit JobProgress(uint32_t attempt) : attempt_(attempt) {}

  uint32_t attempt() const { return attempt_; }

  // A node's agent read its ranks' progress files: replaces what it said
  // before (its step is the lowest of its ranks', its step time the
  // highest). `progress.node` and `time_ms` are ignored. Both return true
  // when the step grew (progress, for the hang timeout).
  bool RecordNode(const std::string& node, const v1::NodeProgress& progress,
                  int64_t now_ms);
  // One rank of `node` reported (gantry progress --step N [--step-time S]).
  // `step_seconds` <= 0: derived from the pace of its steps.
  bool RecordRank(const std::string& node, uint32_t rank, int64_t step,
                  double step_seconds, int64_t now_ms);

  // Judges the nodes (straggler_detector.h) and keeps the result for
  // Findings(). `slack_ms`: how late a report may be (a few heartbeats).
  void Check(int64_t now_ms, const StragglerPolicy& policy, int64_t slack_ms);
  const std::vector<StragglerFinding>& findings() const { return findings_; }
  // The confirmed stragglers of the last Check.
  std::vector<StragglerFinding> Stragglers() const;

  // Every node's progress, by name, as of the last Check.
  std::vector<v1::NodeProgress> Nodes() const;
  // Its slowest rank (for messages); 0 when unknown.
  uint32_t SlowestRank(const std::string& node) const;
  // True the first time it is asked about `node`: a straggler is logged
  // and put in the event log once per attempt.
  bool FirstNotice(const std::string& node) {
    return noticed_.insert(node).second;
  }

 private:
  struct RankState {
    int64_t step = -1;
    double step_seconds = 0;  // as reported, or derived from the pace
    int64_t advanced_ms = 0;  // when its step last grew
    int64_t advance_steps = 1;
  };
  struct NodeState {
    // From the agent: its aggregate of the node's ranks.
    bool from_agent = false;
    RankState agent;
    uint32_t agent_ranks = 0;
    uint32_t agent_slowest_rank = 0;
    std::map<uint32_t, RankState> ranks;  // from gantry progress
    int64_t time_ms = 0;
    double effective_seconds = 0;  // of the last Check
  };
  static bool Advance(RankState& state, int64_t step, double step_seconds,
                      int64_t now_ms);
  v1::NodeProgress Summary(const std::string& name,
                           const NodeState& node) const;

  uint32_t attempt_;
  std::map<std::string, NodeState> nodes_;
  std::map<std::string, int64_t> slow_since_;
  std::vector<StragglerFinding> findings_;
  std::set<std::string> noticed_;
};

}  // namespace gantry
