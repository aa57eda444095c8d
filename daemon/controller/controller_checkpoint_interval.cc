// The checkpoint interval a job's attempt gets (GANTRY_CHECKPOINT_INTERVAL,
// `gantry job`): the Young/Daly optimum (daemon/scheduler/
// checkpoint_interval.h) for the attempt's node count, the node failure
// rate this controller has seen blended with the site's expectation
// (--node-mtbf-hours), and the job's checkpoint cost as its reports
// measured it (else --checkpoint-cost).

#include <cmath>

#include "absl/strings/str_format.h"
#include "daemon/controller/controller.h"

namespace gantry {

void Controller::SetCheckpointInterval(v1::JobRecord& record) const {
  record.set_checkpoint_interval_seconds(0);
  record.clear_checkpoint_interval_basis();
  const int nodes = record.allocation_size();
  const std::optional<double> node_mtbf_hours = failure_rate_.NodeMtbfHours();
  const bool measured = record.checkpoint_cost_seconds() > 0;
  const double cost = measured ? record.checkpoint_cost_seconds()
                               : options_.checkpoint_cost_seconds;
  if (nodes == 0 || !node_mtbf_hours || options_.node_mtbf_hours <= 0) {
    return;
  }
  const double job_mtbf_seconds = *node_mtbf_hours * 3600 / nodes;
  const std::optional<double> interval =
      OptimalCheckpointIntervalSeconds(cost, job_mtbf_seconds);
  if (!interval) return;
  record.set_checkpoint_interval_seconds(std::round(*interval));
  record.set_checkpoint_interval_basis(absl::StrFormat(
      "Young/Daly: a %.1f s checkpoint (%s), %d node(s) at a node MTBF of "
      "%.0f h (%.0f failures in %.0f node-hours seen here)",
      cost, measured ? "measured" : "assumed, --checkpoint-cost", nodes,
      *node_mtbf_hours, failure_rate_.observed_failures,
      failure_rate_.observed_node_hours));
}

}  // namespace gantry
