// What a job's records say of its pre-flight gang check (the check itself
// is a feature: features/preflight/): the core shows it in a pending job's
// reason, and the feature reads it to know where an attempt stands.
// Pure functions of the record; thread-safe.
#pragma once

#include <string>

#include "gantry/v1/types.pb.h"

namespace gantry {

// The reason of a job whose attempt is in its pre-flight, and of an
// attempt the pre-flight ended (AttemptRecord.end_reason).
inline constexpr char kPreflightReason[] = "Preflight";

// The record's current attempt began its pre-flight and has no verdict.
bool PreflightInProgress(const v1::JobRecord& record);

// A pending job's wait `detail`, saying first which nodes its last
// attempt's pre-flight swapped out, when it did.
std::string WithPreflightNote(const v1::JobRecord& record,
                              const std::string& detail);

}  // namespace gantry
