// gantry report (sreport), gantry prio (sprio), gantry share (sshare) and
// gantry diag (sdiag): usage over a period from the accounting query, and
// the scheduler's report. Not thread-safe (they write to stdout).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gantry::cli {

bool IsReportCommand(std::string_view command);

// `program`: the name for messages ("sreport", "gantry report").
int RunReportCommand(std::string_view command, std::string_view program,
                     const std::string& controller,
                     const std::vector<std::string>& args);

}  // namespace gantry::cli
