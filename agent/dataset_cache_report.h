// What the agent tells the controller its dataset cache holds
// (v1::DatasetCacheReport, in Register and in heartbeats after a change):
// the controller prefers nodes holding a job's datasets when it places the
// job. Pure; thread-compatible.
#pragma once

#include <vector>

#include "agent/dataset_cache.h"
#include "gantry/v1/agent.pb.h"

namespace gantry::agent {

v1::DatasetCacheReport DatasetCacheReportOf(
    const std::vector<CachedDataset>& entries);

}  // namespace gantry::agent
