// `gantry run` (srun): a step inside the job this runs in, or, outside a
// job, a job allocated for it that ends with it.
#pragma once

#include <string>
#include <vector>

namespace gantry::cli {

// Returns the step's exit status (srun's: the highest task exit code, 128 +
// signal for a task killed by one), or 1 with a message when the step
// cannot start.
// `program` ("srun", "gantry run") prefixes every message.
int RunStepCommand(const std::string& controller,
                   const std::vector<std::string>& args,
                   const std::string& program = "gantry run");

}  // namespace gantry::cli
