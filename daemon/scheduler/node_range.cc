#include "daemon/scheduler/node_range.h"

#include <algorithm>

namespace gantry {

NodeRange NodeRangeOf(uint32_t nodes, uint32_t min_nodes) {
  const uint32_t max = std::max<uint32_t>(nodes, 1);
  if (min_nodes == 0 || min_nodes >= max) return {max, max};
  return {min_nodes, max};
}

std::optional<uint32_t> LargestFittingSize(
    NodeRange range, uint32_t capable,
    const std::function<bool(uint32_t)>& fits) {
  if (capable < range.min || range.max < range.min) return std::nullopt;
  const uint32_t top = std::min(range.max, capable);
  if (fits(top)) return top;
  if (top == range.min || !fits(range.min)) return std::nullopt;
  // fits(low) holds and fits(high) does not.
  uint32_t low = range.min;
  uint32_t high = top;
  while (high - low > 1) {
    const uint32_t mid = low + (high - low) / 2;
    if (fits(mid)) {
      low = mid;
    } else {
      high = mid;
    }
  }
  return low;
}

GrowAction DecideGrow(const GrowInput& input) {
  if (!input.elastic || !input.range.IsRange()) return GrowAction::kNone;
  if (input.current_nodes == 0 || input.current_nodes >= input.range.max) {
    return GrowAction::kNone;
  }
  // A restart costs the job its work since the last checkpoint and its
  // start-up: only one that brings it back to its full size is worth it,
  // and never one that takes nodes a waiting job could start on.
  if (input.others_waiting || input.grow_fell_short ||
      input.current_nodes + input.free_nodes < input.range.max) {
    return GrowAction::kNone;
  }
  // Restarting right after a checkpoint throws no work away.
  if (!input.has_checkpoint || input.checkpoint_since_wait) {
    return GrowAction::kNow;
  }
  return GrowAction::kAtNextCheckpoint;
}

}  // namespace gantry
