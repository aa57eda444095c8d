// A job as a listing shows it: the record without what its user gave it to
// run (the script, its arguments, the environment), copied from the live
// record. A short payload is copied with the rest and cleared (the
// generated copy is fast); a long one is never copied (the rest is copied
// field by field), so a listing's cost does not grow with the payloads
// jobs carry (a job may hold megabytes of arguments).
#pragma once

#include "gantry/v1/types.pb.h"

namespace gantry {

// `record` without spec.script, spec.script_args and spec.environment. Step
// command lines and the owner's private fields are still there: the caller
// clears them as its reader may see (job_filter.h).
v1::JobRecord JobSummaryOf(const v1::JobRecord& record);

}  // namespace gantry
