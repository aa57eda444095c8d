// Reading the "latest checkpoint" markers that training frameworks already
// write into their checkpoint directory, so Gantry knows where a job can
// resume without the job telling it:
//   Megatron-LM: latest_checkpointed_iteration.txt holds the iteration
//                (or "release"); the checkpoint is iter_%07d (or release).
//   DeepSpeed:   latest holds the tag of the newest checkpoint directory
//                (e.g. global_step1000).
// When both exist, the most recently written marker wins.
//
// The markers are read with the job user's credentials (see
// user_file_access.h): a marker the user could not read themselves (a
// symbolic link to a root-only file, one in a directory closed to them), a
// FIFO, a device or an oversized file is an error, never read by root and
// never reported. Pure apart from reading the files; thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "agent/launch/rank_identity.h"

namespace gantry::agent {

struct CheckpointMarker {
  std::string path;    // the checkpoint itself
  int64_t step = -1;   // -1: unknown
  std::string source;  // "megatron" or "deepspeed"
};

// Markers are small; anything larger is refused unread.
inline constexpr size_t kMaxCheckpointMarkerBytes = 4096;

// Reads the markers in `directory` as `user`. nullopt when the directory
// has no marker (yet) or does not exist.
// Errors: INVALID_ARGUMENT for a marker with garbage in it (naming the file
// and what is wrong) or one that is not a small regular file;
// PERMISSION_DENIED when the user may not read it; DEADLINE_EXCEEDED when
// reading one took longer than `timeout`. The caller logs it and keeps the
// last good checkpoint.
absl::StatusOr<std::optional<CheckpointMarker>> ReadCheckpointMarker(
    const std::string& directory, const RankIdentity& user,
    std::chrono::milliseconds timeout = std::chrono::seconds(2));

}  // namespace gantry::agent
