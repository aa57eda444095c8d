// Per-rank progress files: how a rank tells Gantry its training step and
// step time without an RPC per step. Each rank gets GANTRY_PROGRESS_FILE,
// a file of its own in the attempt's job directory (job_directory.h),
// created empty and owned by the job's user; the rank overwrites it after
// each step (or every few) with one line:
//
//   STEP [STEP_SECONDS]
//
// STEP: the step it has completed (an integer, 0 or more); STEP_SECONDS:
// how long its last step took, in seconds (optional; best the rank's own
// compute time, without waiting on collectives, which every rank waits on
// alike). The agent reads the files of the ranks running on its node with
// each heartbeat and sends one summary per job attempt: the lowest step and
// the highest step time, with the rank it is of (a node is as slow as its
// slowest rank). Writing the file through a temporary one and rename(2)
// keeps a reader from seeing half a line, but a half line is only skipped.
//
// The files belong to the user: a file is opened without following a
// symbolic link, must be a regular file, and only its first 128 bytes are
// read.
//
// Thread-safe: functions of their arguments and the files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "gantry/v1/agent.pb.h"

namespace gantry::agent {

inline constexpr char kProgressFileVariable[] = "GANTRY_PROGRESS_FILE";

struct RankStep {
  int64_t step = 0;
  double step_seconds = 0;  // 0: not given
};

// The file's name in the job directory: "progress-RANK" for the job's
// ranks, "progress-sSTEP-TASK" for a step's tasks.
std::string ProgressFileName(const v1::RankId& rank);

// Parses the file's first line. INVALID_ARGUMENT for anything but an
// integer step >= 0 optionally followed by a finite number of seconds
// >= 0; an empty file is NOT_FOUND (nothing reported yet).
absl::StatusOr<RankStep> ParseProgress(std::string_view text);

// Reads and parses one file; nullopt when it is missing, empty, not a
// regular file, or does not parse.
std::optional<RankStep> ReadProgressFile(const std::string& path);

// One node's summary of its ranks' steps (rank, step); nullopt when none.
std::optional<v1::NodeProgress> SummarizeRanks(
    const std::vector<std::pair<uint32_t, RankStep>>& ranks);

}  // namespace gantry::agent
