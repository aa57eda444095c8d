#include "daemon/controller/features/stragglers/job_progress.h"

#include <algorithm>

namespace gantry {

bool JobProgress::Advance(RankState& state, int64_t step, double step_seconds,
                          int64_t now_ms) {
  if (state.step < 0 || step < state.step) {
    // First word from it (or its steps went back: a restart of the
    // training loop within the attempt): nothing to derive a pace from.
    state.step = step;
    state.step_seconds = std::max(0.0, step_seconds);
    state.advanced_ms = now_ms;
    state.advance_steps = 1;
    return false;
  }
  if (step > state.step) {
    const int64_t steps = step - state.step;
    state.step_seconds = step_seconds > 0
                             ? step_seconds
                             : static_cast<double>(now_ms - state.advanced_ms) /
                                   1000.0 / static_cast<double>(steps);
    state.step = step;
    state.advanced_ms = now_ms;
    state.advance_steps = steps;
    return true;
  }
  if (step_seconds > 0) state.step_seconds = step_seconds;
  return false;
}

bool JobProgress::RecordNode(const std::string& node,
                             const v1::NodeProgress& progress, int64_t now_ms) {
  NodeState& state = nodes_[node];
  state.from_agent = true;
  const bool advanced =
      Advance(state.agent, progress.step(), progress.step_seconds(), now_ms);
  state.agent_ranks = progress.ranks();
  state.agent_slowest_rank = progress.slowest_rank();
  state.time_ms = now_ms;
  return advanced;
}

bool JobProgress::RecordRank(const std::string& node, uint32_t rank,
                             int64_t step, double step_seconds,
                             int64_t now_ms) {
  NodeState& state = nodes_[node];
  state.time_ms = now_ms;
  return Advance(state.ranks[rank], step, step_seconds, now_ms);
}

void JobProgress::Check(int64_t now_ms, const StragglerPolicy& policy,
                        int64_t slack_ms) {
  std::vector<NodeStepTime> times;
  times.reserve(nodes_.size());
  for (auto& [name, node] : nodes_) {
    auto effective = [&](const RankState& r) {
      return EffectiveStepSeconds(r.step_seconds, r.advanced_ms,
                                  r.advance_steps, now_ms, slack_ms);
    };
    double seconds = node.from_agent ? effective(node.agent) : 0;
    for (const auto& [rank, state] : node.ranks) {
      seconds = std::max(seconds, effective(state));
    }
    node.effective_seconds = seconds;
    times.push_back({name, seconds, node.time_ms});
  }
  findings_ = DetectStragglers(times, now_ms, policy, slow_since_);
}

std::vector<StragglerFinding> JobProgress::Stragglers() const {
  std::vector<StragglerFinding> confirmed;
  for (const StragglerFinding& finding : findings_) {
    if (finding.confirmed) confirmed.push_back(finding);
  }
  return confirmed;
}

v1::NodeProgress JobProgress::Summary(const std::string& name,
                                      const NodeState& node) const {
  v1::NodeProgress out;
  out.set_node(name);
  out.set_time_ms(node.time_ms);
  out.set_effective_step_seconds(node.effective_seconds);
  int64_t step = -1;
  double seconds = 0;
  uint32_t slowest = 0;
  uint32_t ranks = 0;
  auto take = [&](const RankState& r, uint32_t rank) {
    if (r.step >= 0) step = step < 0 ? r.step : std::min(step, r.step);
    if (r.step_seconds > seconds) {
      seconds = r.step_seconds;
      slowest = rank;
    }
  };
  if (node.from_agent) {
    take(node.agent, node.agent_slowest_rank);
    ranks += node.agent_ranks;
  }
  for (const auto& [rank, state] : node.ranks) {
    take(state, rank);
    ++ranks;
  }
  out.set_step(step);
  out.set_step_seconds(seconds);
  out.set_slowest_rank(slowest);
  out.set_ranks(ranks);
  return out;
}

std::vector<v1::NodeProgress> JobProgress::Nodes() const {
  std::vector<v1::NodeProgress> out;
  out.reserve(nodes_.size());
  for (const auto& [name, node] : nodes_) out.push_back(Summary(name, node));
  return out;
}

uint32_t JobProgress::SlowestRank(const std::string& node) const {
  auto it = nodes_.find(node);
  return it == nodes_.end() ? 0 : Summary(it->first, it->second).slowest_rank();
}

}  // namespace gantry
