// Reading the "latest checkpoint" markers that training frameworks already
// write into their checkpoint directory, so Gantry knows where a job can
// resume without the job telling it:
//   Megatron-LM: latest_checkpointed_iteration.txt holds the iteration
//                (or "release"); the checkpoint is iter_%07d (or release).
//   DeepSpeed:   latest holds the tag of the newest checkpoint directory
//                (e.g. global_step1000).
// When both exist, the most recently written marker wins. Pure apart from
// reading the files; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace gantry::agent {

struct CheckpointMarker {
  std::string path;    // the checkpoint itself
  int64_t step = -1;   // -1: unknown
  std::string source;  // "megatron" or "deepspeed"
};

// nullopt when the directory has no marker (yet).
// Errors: INVALID_ARGUMENT for a marker with garbage in it (naming the file
// and what is wrong); the caller logs it and keeps the last good checkpoint.
absl::StatusOr<std::optional<CheckpointMarker>> ReadCheckpointMarker(
    const std::string& directory);

}  // namespace gantry::agent
