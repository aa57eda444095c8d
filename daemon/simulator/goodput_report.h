// gantry-sim goodput's output: one table (or one JSON document) with each
// recovery policy's ETTR and where the rest of the wall time went. Pure;
// thread-safe.
#pragma once

#include <string>
#include <vector>

#include "daemon/simulator/failure_model.h"
#include "daemon/simulator/goodput_sim.h"

namespace gantry::sim {

struct GoodputRunInfo {
  std::string scenario;  // one line: what ran
  GoodputConfig config;
  FailureModel model;
  std::vector<RecoveryPolicy> policies;  // in the order of the reports
};

// A header (scenario, failure model, costs) and one row per policy: ETTR,
// then productive, degraded, checkpoint, lost, detecting, recovering,
// pre-flight, queued and starting time as shares of the wall time, then
// failures that hit jobs, restarts (from memory, fallen back), evictions,
// pre-flight catches, shrunk attempts, jobs finished and the GPU-weighted wall
// time.
std::string FormatGoodputTable(const GoodputRunInfo& info,
                               const std::vector<GoodputReport>& reports);

std::string FormatGoodputJson(const GoodputRunInfo& info,
                              const std::vector<GoodputReport>& reports);

}  // namespace gantry::sim
