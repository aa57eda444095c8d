// `gantry attach` (sattach JOBID.STEPID): another terminal's view of a
// running step's output. The waiting srun of the step keeps a copy
// flowing to every attached listener (step_output.h); this asks the
// controller where that srun listens and the step's token (owner and
// admins only), connects, and prints what the tasks write from then on,
// until the step ends. Detaching (Ctrl-C) leaves the step running.
#pragma once

#include <string>
#include <vector>

namespace gantry::cli {

// 0 once the step's output has ended; 1 with a message when the step is
// unknown, not running, or cannot be reached.
int RunAttachCommand(const std::string& controller,
                     const std::vector<std::string>& args,
                     const std::string& program = "gantry attach");

}  // namespace gantry::cli
