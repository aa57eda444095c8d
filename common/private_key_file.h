// Reading a private key (gantryd's TLS key, and any other secret key a
// daemon is given by path) the way ssh does: a key that others on the host
// can read is no longer private, so it is refused at start, with the file
// and its mode named, instead of being used without a word.
//
// Thread-safe (no shared state).
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gantry {

// The contents of the private key file at `path` (symbolic links followed;
// the file itself is checked). `what` names it in messages ("the private
// key", "the etcd client key"). NOT_FOUND when there is no such file;
// INVALID_ARGUMENT, naming the file: it cannot be opened or read, it is not a
// regular file, or its mode lets the group or others read or write it (the
// message gives the mode and the chmod that fixes it).
absl::StatusOr<std::string> ReadPrivateKeyFile(const std::string& path,
                                               std::string_view what);

}  // namespace gantry
