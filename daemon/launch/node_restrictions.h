// A submission's node restrictions (--nodelist, --exclude, --constraint)
// as the controller checks them and hands them to the scheduler.
//
// Pure functions, thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "common/node_constraint.h"
#include "daemon/scheduler/partition_config.h"
#include "daemon/scheduler/scheduler_types.h"
#include "gantry/v1/types.pb.h"

namespace gantry {

// Checks the restrictions of `spec` against its partition and the nodes the
// cluster knows (`known_node`), and normalises them: the constraint to its
// canonical text, --nodes raised to the number of listed nodes.
// INVALID_ARGUMENT says which node or which part is wrong and what to do.
absl::Status CheckNodeRestrictions(
    const PartitionConfig& partition,
    const std::function<bool(const std::string&)>& known_node,
    v1::JobSpec& spec);

// Copies the restrictions into the scheduler's view of the job (nothing is
// allocated for a job without any); `constraint` is the spec's parsed
// --constraint (null: none).
void SetNodeRestrictions(const v1::JobSpec& spec,
                         std::shared_ptr<const NodeConstraint> constraint,
                         PendingJob& pending);

}  // namespace gantry
