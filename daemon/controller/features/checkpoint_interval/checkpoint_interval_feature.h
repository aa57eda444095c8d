// The checkpoint interval each attempt gets (GANTRY_CHECKPOINT_INTERVAL in
// its ranks' environment, `gantry job`): the Young/Daly optimum
// (daemon/scheduler/checkpoint_interval.h) for the attempt's node count,
// at the node failure rate this controller has seen (nodes lost while up,
// over the node-hours up since it started) blended with the site's
// expectation (--node-mtbf-hours, worth ten such failures of evidence),
// and the job's checkpoint cost as its reports measured it (else
// --checkpoint-cost).
//
// Threading: the controller's loop, like every feature.
#pragma once

#include <cstdint>
#include <string>

#include "daemon/controller/core/controller_feature.h"
#include "daemon/scheduler/checkpoint_interval.h"

namespace gantry {

struct CheckpointIntervalSettings {
  // The site's expected mean time between failures of one node, worth ten
  // such failures of evidence against what the cluster shows
  // (--node-mtbf-hours; default: Llama 3's 419 interruptions in 54 days on
  // 2,048 nodes), and the checkpoint cost assumed until a job's reports
  // measure its own (--checkpoint-cost). 0 for either: give no interval.
  double node_mtbf_hours = 6329;
  double checkpoint_cost_seconds = 30;
};

class CheckpointIntervalFeature final : public ControllerFeature {
 public:
  CheckpointIntervalFeature(FeatureContext& context,
                            CheckpointIntervalSettings settings);

  // The attempt starting now gets its interval (before its launch is
  // built).
  void OnJobStarted(const v1::JobRecord& job) override;
  // A node lost while up is a failure (one that never came back after a
  // controller restart is not: when it failed is unknown).
  bool OnNodeDown(const std::string& node, bool was_up) override;
  // The node-hours up, counted from the start, once a second.
  void OnStateLoaded(const v1::FairShareRecord* retired) override;
  void OnTick(uint64_t tick) override;

  const FailureRateEstimate& failure_rate() const { return failure_rate_; }

 private:
  FeatureContext& context_;
  const CheckpointIntervalSettings settings_;
  FailureRateEstimate failure_rate_;
  int64_t last_count_ms_ = 0;  // monotonic; the start, then the last count
};

}  // namespace gantry
