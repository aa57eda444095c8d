// What scancel decides on the client before asking the controller to
// cancel: the jobs -w (nodes), -A and -q select, which the controller's
// filter cannot, and -i's question for each job ("Cancel job_id=12
// name=train partition=gpu [y/n]? ", read from a stream).
//
// Not thread-safe on one stream.
#pragma once

#include <istream>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "gantry/v1/types.pb.h"

namespace gantry::cli {

// Whether the job runs on one of `nodes` (any job when `nodes` is empty).
bool JobOnNodes(const v1::JobRecord& job, const std::set<std::string>& nodes);

// scancel -i: asks about the job until the answer starts with y or n (as
// scancel does); false as well when the input ends.
bool ConfirmCancel(const v1::JobRecord& job, std::istream& in,
                   std::ostream& out);

}  // namespace gantry::cli
