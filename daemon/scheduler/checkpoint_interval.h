// How often a job should checkpoint so that failures and checkpoints
// together cost it the least: Young's first-order optimum (1974) with
// Daly's higher-order correction (2006). A job that checkpoints every tau
// seconds of training, each write costing delta, on nodes whose joint
// mean time between failures is M, loses on average delta/tau to writing
// and about (tau + delta)/2 per failure to redone work; the sum is least
// near tau = sqrt(2 delta M) - delta.
//
// Gantry hands the result to the job (GANTRY_CHECKPOINT_INTERVAL) from the
// cluster's observed failure rate and the job's measured checkpoint cost,
// so that the training code need not guess either.
#pragma once

#include <cstdint>
#include <optional>

namespace gantry {

// The training seconds between checkpoints that maximize goodput, for a
// checkpoint write of `cost_s` seconds on nodes whose joint mean time
// between failures is `mtbf_s` (one node's MTBF over the job's node
// count). Daly: for cost_s < 2 mtbf_s,
//   sqrt(2 cost M) (1 + sqrt(cost / 2M) / 3 + (cost / 2M) / 9) - cost,
// else M. Nothing for a cost or MTBF that is not positive and finite.
std::optional<double> OptimalCheckpointIntervalSeconds(double cost_s,
                                                       double mtbf_s);

// The failure rate a controller has seen: node faults (a node lost under a
// running job) per node-hour that nodes were up, blended with a prior
// worth `prior_node_hours` at the site's expected MTBF, so that a young
// cluster with no failure yet does not read as one that never fails.
struct FailureRateEstimate {
  double prior_mtbf_hours = 0;   // the site's expectation per node
  double prior_node_hours = 0;   // how much evidence the prior is worth
  double observed_failures = 0;  // node faults seen
  double observed_node_hours = 0;

  // Per node; nothing when neither a prior nor observations exist.
  std::optional<double> NodeMtbfHours() const;
};

}  // namespace gantry
