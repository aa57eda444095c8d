// `gantry alloc` (salloc): holds an allocation while a command (default:
// the user's shell) runs here with the job's SLURM_* variables, so that
// srun inside starts steps on it; the allocation ends with the command.
#pragma once

#include <string>
#include <vector>

namespace gantry::cli {

// Returns the command's exit status (128 + signal when one ended it), or 1
// with a message when no allocation was granted. `program` ("salloc",
// "gantry alloc") prefixes every message.
int RunAllocCommand(const std::string& controller,
                    const std::vector<std::string>& args,
                    const std::string& program = "gantry alloc");

}  // namespace gantry::cli
