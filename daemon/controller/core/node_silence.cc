// Nodes not heard from in time (node_silence.h).
#include "daemon/controller/core/node_silence.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "common/log.h"

namespace gantry {

NodeSilence::NodeSilence(Parts parts) : parts_(parts) {}

void NodeSilence::Start() { last_check_ms_ = MonotonicMs(parts_.clock); }

void NodeSilence::Check() {
  const int64_t monotonic = MonotonicMs(parts_.clock);
  // If this loop itself was stalled (swapped out, SIGSTOPped, a slow disk),
  // agents were not heard because we were not listening: give every node
  // the stalled time back before judging it.
  const int64_t expected_gap = parts_.tick_interval_ms;
  if (monotonic - last_check_ms_ > 2 * expected_gap) {
    const int64_t stalled = monotonic - last_check_ms_ - expected_gap;
    log::Warn("controller loop was stalled; extending node deadlines",
              {{"stalled_ms", stalled}});
    for (auto& [name, node] : parts_.state.nodes) node.deadline_ms += stalled;
    parts_.allocation_liveness.Postpone(stalled);
  }
  last_check_ms_ = monotonic;
  std::vector<NodeRuntime*> late;
  size_t up = 0;
  // Silent for over half the node timeout: a healthy agent is heard more
  // often than that, so these fell silent together with the late ones even
  // if their deadlines have not passed yet.
  size_t quiet = 0;
  std::vector<const std::string*> quiet_nodes;
  int64_t first_late_ms = std::numeric_limits<int64_t>::max();
  for (auto& [name, node] : parts_.state.nodes) {
    if (node.record.state() == v1::NODE_DOWN) continue;
    ++up;
    if (monotonic > node.deadline_ms - parts_.options.node_timeout_ms / 2) {
      ++quiet;
      quiet_nodes.push_back(&name);
    }
    if (monotonic > node.deadline_ms) {
      late.push_back(&node);
      first_late_ms = std::min(first_late_ms, node.deadline_ms);
    }
  }
  // Most agents silent at once: this controller is likelier cut off (its
  // link, a firewall change) than most nodes failed in the same moment, and
  // marking them down would drain every busy node. They get the grace
  // agents get after a controller restart (--reconnect-grace), from the
  // first of them falling silent; a real loss of most of the cluster is
  // found that much later.
  const bool most_silent = !late.empty() && quiet >= 2 && 2 * quiet > up;
  if (most_silent &&
      monotonic < first_late_ms + parts_.options.reconnect_grace_ms) {
    // The nodes silent now keep that grace even once most of the others
    // are back: after a cut heals, agents reconnect one by one, and the
    // last must not be marked down because the first are back.
    if (monotonic >= mass_silence_until_ms_) mass_silence_nodes_.clear();
    mass_silence_until_ms_ =
        std::max(mass_silence_until_ms_,
                 first_late_ms + parts_.options.reconnect_grace_ms);
    for (const std::string* name : quiet_nodes) {
      mass_silence_nodes_.insert(*name);
    }
    if (monotonic - first_late_ms <= 2 * expected_gap) {
      log::Warn(
          "most agents fell silent at once: holding off marking them down "
          "for the reconnect grace (this controller may be cut off)",
          {{"silent", quiet},
           {"up", up},
           {"grace_ms", parts_.options.reconnect_grace_ms}});
    }
    late.clear();
  }
  if (monotonic < mass_silence_until_ms_) {
    std::erase_if(late, [&](const NodeRuntime* node) {
      return mass_silence_nodes_.contains(node->record.name());
    });
  } else if (!mass_silence_nodes_.empty()) {
    mass_silence_nodes_.clear();
  }
  for (NodeRuntime* node : late) {
    parts_.nodes.MarkNodeDown(
        *node, node->link ? "heartbeats stopped"
                          : "agent connection lost and not back in time");
  }
}

}  // namespace gantry
