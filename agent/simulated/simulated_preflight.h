// Pre-flight gang checks on simulated nodes (gantry-fleet): no
// bytes move; each node answers after a simulated time with the figures a
// plan gives it, so the controller's handling of passing, failing, slow
// and silent nodes can be tested at fleet scale.
//
// The plan (--preflight FILE, read at every check so a test can
// change it between attempts) has one line per node that is not healthy:
//   NAME fail [WHY...]   the node's own check fails with WHY
//   NAME slow            its network runs at a tenth of the others'
//   NAME silent          it never answers (a hung check)
// Blank lines and lines starting with '#' are ignored. Links are as fast
// as the slower of their two ends, as on a real ring.
//
// Pure (the file is read by the caller). Thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "gantry/v1/agent.pb.h"

namespace gantry::agent {

// A simulated healthy link, MB/s.
inline constexpr double kSimulatedLinkMbps = 10000;

struct SimulatedPreflightBehavior {
  enum class Kind { kFail, kSlow, kSilent };
  Kind kind = Kind::kFail;
  std::string why;  // kFail
};
using SimulatedPreflightPlan =
    std::map<std::string, SimulatedPreflightBehavior>;

// INVALID_ARGUMENT naming the line for anything else.
absl::StatusOr<SimulatedPreflightPlan> ParseSimulatedPreflightPlan(
    const std::string& text);

// `node`'s answer to `check` under `plan`; nullopt: it stays silent.
std::optional<v1::PreflightResult> SimulatePreflight(
    const v1::PreflightCheck& check, const std::string& node,
    const SimulatedPreflightPlan& plan, uint32_t elapsed_ms);

}  // namespace gantry::agent
