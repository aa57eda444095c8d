// What the everyday commands (queue, cancel, hold, job, nodes, progress,
// topology, drain, hostnames) share: their error line, the calling user,
// the clock, and list options that may be repeated.
//
// Not thread-safe in itself: CurrentUser reads the password database.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace gantry::cli {

// Prints "gantry COMMAND: error: MESSAGE" and returns the exit code 1.
int Fail(std::string_view command, const absl::Status& status);

// Prints "PROGRAM: error: MESSAGE" (PROGRAM as the user called it: sacct,
// or gantry acct) and returns the exit code 1.
int ProgramError(std::string_view program, const absl::Status& status);

// The name of the user running the command (its uid as text if it has no
// name).
std::string CurrentUser();

// Now, in milliseconds since the Unix epoch.
int64_t NowMs();

// Now as Slurm's slurm_ctime2 writes it ("Fri Dec 04 16:50:00 2026"): the
// line squeue and sinfo print above the header with -l and -i.
std::string SlurmDateLine();

// "-u a,b -u c" -> {a, b, c}: comma-separated values of a repeatable
// option, empty items dropped.
std::vector<std::string> SplitLists(const std::vector<std::string>& lists);

// Appends every value to a repeated protobuf field.
template <typename Values, typename Field>
void AddAll(const Values& values, Field& field) {
  for (const auto& value : values) *field.Add() = value;
}

}  // namespace gantry::cli
