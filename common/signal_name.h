// Signal names as Slurm's commands take them (scancel --signal, sbatch
// --signal): "USR1", "SIGUSR1", "usr1" or "10".
//
// Pure; thread-safe.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"

namespace gantry {

// The signal number. INVALID_ARGUMENT for anything else (names the word,
// says what is accepted).
absl::StatusOr<int> ParseSignal(std::string_view text);

}  // namespace gantry
