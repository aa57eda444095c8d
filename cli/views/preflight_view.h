// How `gantry job` shows an attempt's pre-flight gang check: its time,
// its summary (figures), and the nodes it swapped out with why; as text
// lines and as the attempt's "preflight" object in --json. Pure functions.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "gantry/v1/types.pb.h"

namespace gantry::cli {

// Indented lines under the attempt's line; "" when it ran no pre-flight.
// `now_ms` times a check still running.
std::string PreflightLines(const v1::AttemptRecord& attempt, int64_t now_ms);
// null when it ran no pre-flight.
nlohmann::json PreflightJson(const v1::AttemptRecord& attempt);

}  // namespace gantry::cli
