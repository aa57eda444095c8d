// squeue -O/--Format's field names (Slurm's, squeue(1)) and the -o letter
// each stands for here.
//
// Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gantry::cli {

// The letter of a -O name, case-insensitive ("JobID" -> 'A', "name" ->
// 'j'); 0 for a name Gantry does not know.
char SqueueFieldLetter(std::string_view name);

// -O fields that have no -o letter in squeue stand for these (never a
// letter a -o format accepts).
inline constexpr char kMaxNodesField = '\x01';  // MaxNodes

// Every name SqueueFieldLetter knows, in Slurm's spelling.
const std::vector<std::string>& SqueueFieldNames();

}  // namespace gantry::cli
