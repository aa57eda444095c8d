// A job's or the cluster's goodput split (v1::GoodputSplit, computed by
// the controller: daemon/controller/goodput.h) for people and for scripts.
// Pure functions; thread-safe.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "gantry/v1/types.pb.h"

namespace gantry::cli {

// "ETTR 93.1%: productive 1:02:03, lost 0:03:00, ..." : the ratio, then
// every segment that is not zero, in the order a job lives them.
std::string GoodputLine(const v1::GoodputSplit& split);

// {"ettr": 0.93, "total_seconds": ..., "queued_seconds": ..., ...}: every
// segment, in seconds with millisecond precision.
nlohmann::json GoodputToJson(const v1::GoodputSplit& split);

}  // namespace gantry::cli
