// The features gantryd runs beside the controller's core, in the order
// their hooks are called (daemon/controller/controller_feature.h). gantryd
// and the tests that drive a whole controller register this list.
#pragma once

#include <vector>

#include "daemon/controller/core/controller_feature.h"
#include "daemon/controller/features/checkpoint_interval/checkpoint_interval_feature.h"
#include "daemon/controller/features/datasets/stage_ahead.h"
#include "daemon/controller/features/fault_survivors/fault_survivor_feature.h"
#include "daemon/controller/features/preflight/preflight_rounds.h"
#include "daemon/controller/features/stragglers/straggler_feature.h"

namespace gantry {

// What the features are told by gantryd's flags.
struct FeatureSettings {
  StragglerSettings stragglers;
  PreflightOptions preflight;
  FaultSurvivorSettings fault_survivors;
  CheckpointIntervalSettings checkpoint_interval;
  // Staging waiting jobs' datasets ahead (gantryd --stage-ahead).
  StageAheadOptions stage_ahead;
};

std::vector<FeatureFactory> StandardFeatures(
    const FeatureSettings& settings = {});

}  // namespace gantry
