// What a job's options imply together, once the directives and the command
// line are both applied: --gpus, --gpus-per-task, --mem-per-cpu,
// --mem-per-gpu, --mem=0 and --nodelist turned into the per-node request
// the scheduler reads, or refused when they contradict each other.
//
// Pure function, thread-safe.
#pragma once

#include "absl/status/status.h"
#include "common/job_request.h"

namespace gantry {

// Turns --gpus, --gpus-per-task, --mem-per-cpu, --mem-per-gpu and --mem=0
// into the per-node request, and raises --nodes to the count of --nodelist;
// adds a warning to `request` where it changes what was asked. Errors:
// INVALID_ARGUMENT when the options contradict each other or --mem /
// --gpus-per-node, or a node is both in --nodelist and in --exclude.
absl::Status ResolveDerivedResources(JobRequest& request);

}  // namespace gantry
