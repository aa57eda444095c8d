// gantry report (sreport): usage of the cluster over a period, by user,
// from the accounting query (cli/slurm/usage_report.h does the arithmetic).
// Not thread-safe (writes to stdout).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gantry::cli {

// `program`: the name for messages ("sreport", "gantry report").
int RunSreportCommand(std::string_view program, const std::string& controller,
                      const std::vector<std::string>& args);

}  // namespace gantry::cli
