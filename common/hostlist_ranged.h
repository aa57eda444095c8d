// Slurm's hostlist_ranged_string: host names compressed in the order given,
// as `scontrol show hostlist` prints them. Unlike CompressHostlist
// (common/hostlist.h), nothing is sorted or deduplicated: a run of names
// whose numbers go up by one becomes a range, and neighbouring ranges with
// the same prefix share brackets ("n3,n1,n2" -> "n[3,1-2]"; "n1,x1,n2"
// stays as it is).
//
// Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

namespace gantry {

std::string RangedHostlist(const std::vector<std::string>& hosts);

}  // namespace gantry
