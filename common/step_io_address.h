// Where a step's tasks send their output: the address of the gantry run
// that waits for the step, as the controller passes it ("host:port",
// "[v6]:port"); the agent's tasks and sattach connect there.
#pragma once

#include <sys/socket.h>

#include <string>

#include "absl/status/statusor.h"

namespace gantry {

// Resolves `address` into `out`; returns the address length, or
// INVALID_ARGUMENT naming what is wrong with it.
absl::StatusOr<socklen_t> ResolveStepIoAddress(const std::string& address,
                                               sockaddr_storage& out);

}  // namespace gantry
