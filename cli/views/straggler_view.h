// How the CLI shows per-node progress and stragglers (gantryd's
// --straggler-policy): the "Progress" and "Stragglers" lines of `gantry
// job ID`, the "Stragglers" lines of `gantry status`, and both as JSON.
// Thread-safe: pure functions of the records.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gantry/v1/client.pb.h"

namespace gantry::cli {

// One line per straggler: "n3 rank 5: 2.1x slower (2.10 s/step vs 1.00 s)
// for 65 s; swap at the next checkpoint", as of `now_ms`.
std::vector<std::string> StragglerLines(const v1::JobStragglers& job,
                                        int64_t now_ms);
// `gantry job ID`: each node's step and step time, then the stragglers.
std::string JobProgressText(const v1::JobStragglers& job, int64_t now_ms);
nlohmann::json JobProgressToJson(const v1::JobStragglers& job);
// `gantry status --json`: the jobs with stragglers.
nlohmann::json StragglerJobsToJson(const v1::ClusterStatusResponse& status);

}  // namespace gantry::cli
