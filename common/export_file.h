// sbatch --export-file=FILE|FD: environment variables for the job, read by
// the client at submission. The content is NAME=value records separated by
// NUL characters (so values may hold newlines and any other byte), or by
// newlines when the content has no NUL. Its variables are set on top of
// what --export gives, as Slurm merges them.
//
// ParseExportFile is pure; ReadExportFile reads a file or descriptor. Both
// thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gantry {

// The most bytes an export file may hold (the controller takes at most
// 1 MiB of environment per job).
inline constexpr std::size_t kMaxExportFileBytes = std::size_t{1} << 20;

// The variables of `content`. Empty records (a trailing separator, blank
// lines) are skipped. Errors: INVALID_ARGUMENT naming the record (by
// number) that is not NAME=value with NAME a shell variable name, or
// content above kMaxExportFileBytes.
absl::StatusOr<std::map<std::string, std::string>> ParseExportFile(
    std::string_view content);

// Reads `argument` as sbatch does: a number from 3 up is a readable file
// descriptor (0-2 are refused, as Slurm refuses standard input and
// output), anything else a path. Errors: INVALID_ARGUMENT naming the file
// when it cannot be read, is a directory or is too large, and
// ParseExportFile's.
absl::StatusOr<std::map<std::string, std::string>> ReadExportFile(
    const std::string& argument);

}  // namespace gantry
