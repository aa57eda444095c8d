#include "daemon/scheduler/checkpoint_interval.h"

#include <cmath>

namespace gantry {

std::optional<double> OptimalCheckpointIntervalSeconds(double cost_s,
                                                       double mtbf_s) {
  if (!std::isfinite(cost_s) || !std::isfinite(mtbf_s) || cost_s <= 0 ||
      mtbf_s <= 0) {
    return std::nullopt;
  }
  if (cost_s >= 2 * mtbf_s) return mtbf_s;
  const double ratio = cost_s / (2 * mtbf_s);
  return std::sqrt(2 * cost_s * mtbf_s) *
             (1 + std::sqrt(ratio) / 3 + ratio / 9) -
         cost_s;
}

std::optional<double> FailureRateEstimate::NodeMtbfHours() const {
  double failures = observed_failures;
  double hours = observed_node_hours;
  if (prior_mtbf_hours > 0 && prior_node_hours > 0) {
    failures += prior_node_hours / prior_mtbf_hours;
    hours += prior_node_hours;
  }
  if (hours <= 0) return std::nullopt;
  // No failure in all that time (no prior): at least as long as observed.
  if (failures <= 0) return hours;
  return hours / failures;
}

}  // namespace gantry
