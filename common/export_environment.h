// sbatch --export: which of the submitting environment a job gets. Pure;
// thread-safe.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gantry {

// Checks an --export value: ALL, NONE, or a comma list of NAME and
// NAME=value, optionally with ALL among them. INVALID_ARGUMENT naming the
// bad item.
absl::Status CheckExportSpec(std::string_view spec);

// The job's environment from the submitter's `environment`: everything
// (ALL, the default; NAME=value items set on top), nothing but SLURM_*
// variables (NONE), or SLURM_* plus the named variables (a list without
// ALL), as sbatch does.
absl::StatusOr<std::map<std::string, std::string>> ExportedEnvironment(
    std::string_view spec,
    const std::map<std::string, std::string>& environment);

}  // namespace gantry
