// The Slurm options (sbatch, Slurm 22.05) that Gantry accepts without
// acting on them, and those it refuses, each with the reason the user is
// told: a warning where ignoring the option changes nothing that matters
// here, an error where it would. The option table (job_option_table.cc) names
// the options; this file says why.
//
// Pure functions over constant tables, thread-safe.
#pragma once

#include <string_view>

namespace gantry {

// Why ignoring --`option` is harmless ("jobs never share CPUs or GPUs"),
// or "not supported" for an option this file does not list.
std::string_view WhyIgnored(std::string_view option);

// Why --`option` is refused ("containers are not supported"), or "not
// supported" for an option this file does not list.
std::string_view WhyRefused(std::string_view option);

}  // namespace gantry
