// Where a step task's command is looked for, in the order execvp(3) would
// try: a command with a slash is used as it is (relative to the task's
// working directory); a bare name is joined to each directory of the
// task's own PATH (an empty entry is the working directory), or of
// execvp's default when the task has no PATH. srun finds commands the same
// way, on the task's PATH rather than the agent's.
//
// The list is built before the child is spawned: the child (rank_child.h)
// only walks it.
#pragma once

#include <string>
#include <vector>

namespace gantry::agent {

// `environment` holds "NAME=value" strings, as the task will get them.
std::vector<std::string> CommandCandidates(
    const std::string& command, const std::vector<std::string>& environment);

}  // namespace gantry::agent
