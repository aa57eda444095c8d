// The accounting commands: gantry acct (sacct), gantry stat (sstat),
// gantry report (sreport),
// gantry prio (sprio), gantry share (sshare) and gantry diag (sdiag). They
// take Slurm's options (cli/slurm/slurm_options.h), so main routes their
// words here before CLI11 sees them.
//
// Not thread-safe (they write to stdout).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gantry::cli {

// Whether `command` (the word after "gantry") is one of them.
bool IsAccountingCommand(std::string_view command);

// `program`: how the user called it ("sacct", or "gantry" for `gantry
// acct`), for messages. Returns the exit code.
int RunAccountingCommand(std::string_view command, std::string_view program,
                         const std::string& controller,
                         const std::vector<std::string>& args);

}  // namespace gantry::cli
