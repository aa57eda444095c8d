// The pre-flight gang check's verdict: from what each node of a job
// attempt reported (or failed to report in time), which nodes must be
// swapped out before the job's ranks start, and why.
//
// The check is a ring: node i sends to node i+1 and receives from node
// i-1, so each link has two ends and a failed or slow link does not by
// itself say which end is bad. A node is blamed for the ring when both of
// its links (out and in) are bad: a broken or slow NIC, network stack or
// host shows on both. A broken link whose two ends are otherwise fine is
// blamed on both ends, since running the gang over it would not work
// either; a slow one alone blames nobody. A link whose sender connected but
// whose receiver's listener never took the transfer is not judged at all:
// the path works, and a listener held by others (its port flooded) says
// nothing about either node. A link's bandwidth is the better
// of what its two ends timed (a busy host delays one end's clock now and
// then), and it is slow when below `slow_factor` times the median of the
// gang's links; per-node figures (a site command's bus bandwidth) likewise
// against the median of the nodes. Medians need at
// least three figures: with two, nobody can tell which one is normal.
//
// Bandwidth alone never swaps a node out: a busy host (other work beside
// the agent, a page-cache flush) slows a transfer now and then, and
// draining a healthy node costs more than running a gang on a marginal
// one. A node judged slow (both links, or its site figure) is `degraded`:
// the job starts with it, the verdict is recorded, and the next
// pre-flight measures it again. Failures (a check that failed, a broken
// link, no answer) still reject.
//
// Pure: no I/O, no clock. Thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gantry {

struct PreflightNodeReport {
  std::string node;
  bool answered = false;  // false: no result before the deadline
  // The node's own checks (health, site command, gloo) passed.
  bool passed = false;
  std::string problem;
  // Its send to the ring successor, and its receive from the predecessor:
  // empty problem: it worked, at this many MB/s.
  std::string send_problem;
  std::string receive_problem;
  // The send failed only because the successor's listener never took the
  // transfer (PreflightResult.send_not_taken): the link is not judged.
  bool send_not_taken = false;
  double send_mbps = 0;
  double receive_mbps = 0;
  double round_trip_us = 0;
  double gloo_mbps = 0;
  double site_mbps = 0;  // 0: the site command reported no figure
};

struct PreflightRejection {
  std::string node;
  std::string reason;  // one line, what `gantry nodes` shows as the drain
};

struct PreflightVerdict {
  std::vector<PreflightRejection> rejected;  // in gang order
  // Slow only: kept in the gang, with why (in gang order).
  std::vector<PreflightRejection> degraded;
  // Medians over the gang (0: not measured), for the job's summary.
  double median_link_mbps = 0;
  double median_round_trip_us = 0;
  double median_gloo_mbps = 0;
  double median_site_mbps = 0;
};

// `reports` in gang (ring) order. `slow_factor` in (0, 1]; 0 turns the
// slowness test off (failures still count). `timeout_ms` only words the
// reason of nodes that did not answer.
PreflightVerdict JudgePreflight(const std::vector<PreflightNodeReport>& reports,
                                double slow_factor, int64_t timeout_ms);

// The median of `values` (the mean of the middle two for an even count);
// 0 for none.
double PreflightMedian(std::vector<double> values);

}  // namespace gantry
