// A job's state as the scheduler's state machine names it
// (daemon/scheduler/job_state_machine.h) and as records store it.
#pragma once

#include "daemon/scheduler/job_state_machine.h"
#include "gantry/v1/types.pb.h"

namespace gantry {

v1::JobState ToProto(JobStatus status);
// A state the machine does not know (unspecified) reads as pending.
JobStatus FromProto(v1::JobState state);

}  // namespace gantry
