// Reading a whole input file (a topology file, a fabric dump) with errors
// fit for the admin who named it. Thread-safe.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gantry {

// OK when `path` names something that is not a directory.
// Errors: NOT_FOUND "<file_noun> not found: <path>"; INVALID_ARGUMENT
// "<path> is a directory, not <content_noun>".
absl::Status CheckNotDirectory(const std::string& path,
                               const std::string& file_noun,
                               const std::string& content_noun);

// The file's bytes. Errors: INVALID_ARGUMENT "cannot read <path>: <why>".
absl::StatusOr<std::string> ReadWholeFile(const std::string& path);

}  // namespace gantry
