// The permissions of gantryd's state: the RocksDB files hold every job's
// script and exported environment (tokens, keys), so no other local user
// may read them, and no one else may write where gantryd will read them
// back as the truth.
//
// PrepareStateDirectory creates the directory 0700, or checks and repairs
// an existing one: too open for reading (0755 from a start under umask 022
// by an earlier version) is tightened, with a warning, down to every file
// under it; writable by others, or owned by someone else, is refused,
// since what is in it can no longer be trusted, and an admin must look.
// Every existing directory above it must be writable only by its owner
// (root or gantryd's user) or be sticky (/tmp): otherwise another user
// could swap the state directory for their own.
//
// Functions of the file system; call them from one thread at start.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace gantry {

// From now on every file and directory this process creates has no
// group/other permission bits, whatever umask it was started with (RocksDB
// creates its files 0644 less the umask).
void RestrictFileCreationMask();

// See above. FAILED_PRECONDITION naming the directory, its mode or owner,
// and what to do; INTERNAL when the file system fails.
absl::Status PrepareStateDirectory(const std::string& path);

// Creates `path` (and missing parents) with mode 0755 when missing, for a
// directory every user must reach (the client socket's).
absl::Status CreateSharedDirectory(const std::string& path);

}  // namespace gantry
