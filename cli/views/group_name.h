// A group's name for Slurm's fields (%g, GroupId=, sacct's Group).
#pragma once

#include <cstdint>
#include <string>

namespace gantry::cli {

// The name of group `gid` on this host, or the number when it has none.
std::string GroupName(uint32_t gid);

}  // namespace gantry::cli
