// `gantry handover [STANDBY]` (scontrol takeover [INDEX]), for admins: the
// leading controller hands leadership to a standby on purpose, e.g. before
// its host is upgraded, so the cluster goes without a leader for well
// under a second instead of an election after the leader stops.
//
// STANDBY: a standby's name, or its position (1, 2, ...) among the
// standbys in name order, as scontrol takeover's INDEX; none: the most
// caught-up standby. Waits until the new leader answers, then prints who
// leads and how long that took. Returns the process exit code; errors
// read "gantry handover: error: ...", and then the leader is unchanged.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "cli/command_table.h"
#include "gantry/v1/client.pb.h"

namespace gantry::cli {

int RunHandoverCommand(const std::string& controller,
                       const std::string& standby);

// The standby's name that `standby` means given the controllers in
// `replication` (empty stays empty: the controller picks). A name of a
// listed controller is taken as is; else digits are a 1-based position
// among the standbys in name order. NOT_FOUND for a position past them; a
// name nobody has goes to the controller, which says whom it knows (as
// does anything, for a controller without replication).
absl::StatusOr<std::string> ResolveStandby(
    const v1::ReplicationStatus& replication, const std::string& standby);

// Adds `gantry handover` (scontrol takeover) to the command table.
void AddHandoverCommand(CommandTable& commands);

}  // namespace gantry::cli
