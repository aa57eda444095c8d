// Stragglers: the nodes of a running job whose ranks step well below their
// peers, for long enough. Pure and thread-safe (no state but what the
// caller passes in), so the rules are table-tested apart from the
// controller.
//
// The rules:
// - Each node of the job has one step time: the slowest of its ranks' last
//   step times (a node is as slow as its slowest rank), or, where the ranks
//   report only their step counts, the time per step between reports.
//   EffectiveStepSeconds lengthens it for a node that stops advancing.
// - A node is slow while its step time is at least `slow_factor` times the
//   median of the other nodes' (its peers'); it stops being slow only once
//   it is below the midpoint between 1 and slow_factor times that median,
//   so a node hovering at the threshold does not flap.
// - It is a straggler once slow without a break for `min_duration_ms`: one
//   slow step (a garbage collection, a checkpoint write on that node) is
//   not enough.
// - Nothing is judged without at least `min_peers` other nodes with a
//   known, recent step time: a median of one or two says little. Reports
//   older than `stale_ms` do not count.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry {

// What gantryd does about a straggler (--straggler-policy).
enum class StragglerResponse {
  kOff,     // not even looked for
  kReport,  // shown in gantry job, gantry status and the metrics
  // Also: at the job's next checkpoint, the node is drained and the job
  // restarted from that checkpoint without it, when a spare node is free.
  kSwap,
};

// "off", "report" or "swap"; INVALID_ARGUMENT naming the choices otherwise.
absl::StatusOr<StragglerResponse> ParseStragglerResponse(std::string_view text);
std::string_view StragglerResponseName(StragglerResponse response);

struct StragglerPolicy {
  double slow_factor = 1.5;
  int64_t min_duration_ms = 60'000;
  uint32_t min_peers = 2;
  int64_t stale_ms = 30'000;
};

// One node's current step time (<= 0: unknown) and when it was reported.
struct NodeStepTime {
  std::string node;
  double step_seconds = 0;
  int64_t time_ms = 0;
};

// A node that is slow now.
struct StragglerFinding {
  std::string node;
  double step_seconds = 0;
  double peer_median_seconds = 0;
  double slowdown = 0;  // step_seconds / peer_median_seconds
  int64_t slow_since_ms = 0;
  // Slow for at least min_duration_ms: a straggler. Otherwise a suspect.
  bool confirmed = false;
};

// Judges every node of one job attempt at `now_ms`. `slow_since` holds,
// per node, when its current run of slowness began; it is updated here
// (nodes no longer slow, or no longer judged, are erased), so the caller
// keeps it from one call to the next. Returns the slow nodes, slowest
// first.
std::vector<StragglerFinding> DetectStragglers(
    const std::vector<NodeStepTime>& nodes, int64_t now_ms,
    const StragglerPolicy& policy, std::map<std::string, int64_t>& slow_since);

// A node's step time for the check: `step_seconds`, or, when longer, the
// time since its step last advanced (less `slack_ms` for the reports'
// own delay) over the steps that last advance covered. A node stuck
// on a step thus looks slower and slower instead of keeping its last
// good figure. `step_seconds` <= 0 and no stall: 0 (unknown).
double EffectiveStepSeconds(double step_seconds, int64_t last_advance_ms,
                            int64_t last_advance_steps, int64_t now_ms,
                            int64_t slack_ms);

}  // namespace gantry
