// The checkpoint interval of each attempt (checkpoint_interval_feature.h).
#include "daemon/controller/features/checkpoint_interval/checkpoint_interval_feature.h"

#include <cmath>
#include <optional>

#include "absl/strings/str_format.h"

namespace gantry {
namespace {

// The node count is taken once a second of ticks (four a second).
constexpr uint64_t kTicksPerCount = 4;

}  // namespace

CheckpointIntervalFeature::CheckpointIntervalFeature(
    FeatureContext& context, CheckpointIntervalSettings settings)
    : context_(context), settings_(settings) {
  // The site's expectation, worth ten failures of evidence.
  failure_rate_.prior_mtbf_hours = settings_.node_mtbf_hours;
  failure_rate_.prior_node_hours = 10 * settings_.node_mtbf_hours;
}

void CheckpointIntervalFeature::OnJobStarted(const v1::JobRecord& job) {
  context_.UpdateJob(job.id(), [this](v1::JobRecord& record) {
    record.set_checkpoint_interval_seconds(0);
    record.clear_checkpoint_interval_basis();
    const int nodes = record.allocation_size();
    const std::optional<double> node_mtbf_hours = failure_rate_.NodeMtbfHours();
    const bool measured = record.checkpoint_cost_seconds() > 0;
    const double cost = measured ? record.checkpoint_cost_seconds()
                                 : settings_.checkpoint_cost_seconds;
    if (nodes == 0 || !node_mtbf_hours || settings_.node_mtbf_hours <= 0) {
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
  });
}

bool CheckpointIntervalFeature::OnNodeDown(const std::string& /*node*/,
                                           bool was_up) {
  if (was_up) failure_rate_.observed_failures += 1;
  return false;  // no work of this feature's was on it
}

void CheckpointIntervalFeature::OnStateLoaded(
    const v1::FairShareRecord* /*retired*/) {
  last_count_ms_ = MonotonicMs(context_.clock());
}

void CheckpointIntervalFeature::OnTick(uint64_t tick) {
  if (tick % kTicksPerCount != 0) return;
  const int64_t now = MonotonicMs(context_.clock());
  // Every node not down counts as up: unreachable ones may be running
  // work still, and a drained node has not failed.
  size_t up = 0;
  context_.ForEachNode(
      [&up](const v1::NodeRecord& node, bool, const v1::DatasetCacheReport&) {
        if (node.state() != v1::NODE_DOWN) ++up;
      });
  failure_rate_.observed_node_hours +=
      static_cast<double>(up) * static_cast<double>(now - last_count_ms_) /
      3.6e6;
  last_count_ms_ = now;
}

}  // namespace gantry
