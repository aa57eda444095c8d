// Why a job's ranks are being stopped, as the agent is told in KillRanks:
// the agent writes Slurm's "*** JOB N ON NODE CANCELLED AT ... ***" line
// into the job's output for a cancel and a time limit only (see
// agent/launch/kill_notice.h), so a requeue, a node failure or a hang must map
// to REASON_OTHER. Pure functions, thread-safe.
#pragma once

#include "daemon/scheduler/job_state_machine.h"
#include "gantry/v1/agent.pb.h"

namespace gantry {

// The reason for the kill that the job event `kind` causes. A requeued
// attempt (`requeue`: the job goes back to the queue) is never a cancel or
// a time limit, whatever the event.
v1::KillRanks::Reason KillReasonFor(JobEvent::Kind kind, bool requeue);

}  // namespace gantry
