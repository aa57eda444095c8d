#include "daemon/replication/log_truncation_policy.h"

#include <algorithm>

namespace gantry::replication {

std::optional<uint64_t> TruncationTarget(const TruncationInput& input) {
  std::optional<uint64_t> slowest;
  for (uint64_t applied : input.standby_applied) {
    if (applied < input.truncated_through) continue;  // needs a snapshot
    slowest = std::min(slowest.value_or(applied), applied);
  }
  if (!slowest) return std::nullopt;
  const uint64_t held_everywhere = std::min(*slowest, input.leader_index);
  if (held_everywhere <= input.retain) return std::nullopt;
  const uint64_t target = held_everywhere - input.retain;
  if (target <= input.truncated_through) return std::nullopt;
  return target;
}

}  // namespace gantry::replication
