// `gantry run` (srun): a step inside the job this runs in.
#pragma once

#include <string>
#include <vector>

namespace gantry::cli {

// Returns the step's exit status (srun's: the highest task exit code, 128 +
// signal for a task killed by one), or 1 with a message when the step
// cannot start.
int RunStepCommand(const std::string& controller,
                   const std::vector<std::string>& args);

}  // namespace gantry::cli
