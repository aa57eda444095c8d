// How long a checkpoint took to write, read from its files' times: from
// the first file's creation to the last file's last write. Lets Gantry
// learn a job's checkpoint cost from the checkpoint it reports, without
// the training code timing anything.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace gantry {

// The longest write time a report may carry: a day is more than any one
// checkpoint write (a longer span is older files in a reused directory).
inline constexpr double kMaxCheckpointWriteSeconds = 86400;

// For a directory, the span from the earliest file birth (or, where the
// file system keeps none, the earliest last write) to the latest last
// write among its regular files, at most `max_files` of them (symbolic
// links are not followed); for a file, its own birth to last write.
// Nothing when there is no file, or only one without a birth time.
// Reads as the caller: run it with the job owner's credentials.
std::optional<double> CheckpointWriteSeconds(const std::string& path,
                                             std::size_t max_files = 100'000);

}  // namespace gantry
