// gantry stat (sstat): CPU time and memory of running jobs, as their nodes'
// agents measure them. Not thread-safe (writes to stdout).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gantry::cli {

// `program`: the name for messages ("sstat", "gantry stat").
int RunStatCommand(std::string_view program, const std::string& controller,
                   const std::vector<std::string>& args);

}  // namespace gantry::cli
