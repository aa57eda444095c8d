// Parsing of sbatch-style options, from `#SBATCH`/`#GANTRY` lines of a batch
// script and from the command line, into a JobRequest.
//
// Pure functions, thread-safe. The same option table serves both sources so
// a directive and a flag always mean the same thing; command-line options are
// applied after the directives, so they win.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/job_request.h"

namespace gantry {

// Collects the option words of the directive block of a batch script, as
// sbatch does: `#SBATCH` (and `#GANTRY`) lines are read from the top of the
// script, after the optional `#!` line, up to the first line that is neither
// blank nor a comment. Words are split on whitespace with shell-like quoting
// ('...' and "..."); a `#` word outside quotes starts a comment.
// Errors: INVALID_ARGUMENT naming the line number for an unterminated quote.
absl::StatusOr<std::vector<std::string>> ExtractDirectiveWords(
    std::string_view script);

// Applies option words ("-N", "2", "--ntasks-per-node=4", "-J", "name",
// "-N2", ...) to `request`, in order. Every word must be part of an option:
// positional words are an error here (the caller splits off the script path
// first). Accepts short and long forms, `--opt=value` and `--opt value`.
// Errors (INVALID_ARGUMENT, message naming the option and the source, e.g.
// "line 3: unknown option --nodez (did you mean --nodes?)"): unknown option,
// missing value, malformed value, negative/zero/absurd count. On error
// `request` may have been partly updated: callers apply to a copy.
// `source` labels error messages ("#SBATCH line 3", "command line").
absl::Status ApplyJobOptions(const std::vector<std::string>& words,
                             std::string_view source, JobRequest& request);

// Whether `word` is an option whose value is the next word ("-N", "--nodes";
// not "-N2", "--nodes=2" or a flag). Lets a caller that splits a command
// line into options and a script path skip option values.
bool OptionTakesNextWord(std::string_view word);

// Like ApplyJobOptions over a script's directives, with line numbers in errors.
absl::Status ApplyScriptDirectives(std::string_view script,
                                   JobRequest& request);

// Turns --gpus, --gpus-per-task, --mem-per-cpu, --mem-per-gpu and --mem=0
// into the per-node request, once directives and command line are both
// applied. INVALID_ARGUMENT when they contradict each other or --mem /
// --gpus-per-node.
absl::Status ResolveDerivedResources(JobRequest& request);

// Slurm time formats: "M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S", and
// "UNLIMITED"/"INFINITE" (returned as 0). Result in seconds.
absl::StatusOr<uint64_t> ParseTimeLimit(std::string_view text);

// The other way: "M:SS", "H:MM:SS" or "D-HH:MM:SS", as Slurm prints times.
std::string FormatTimeLimit(uint64_t seconds);

// Slurm memory sizes: a count with an optional K, M, G or T suffix (default
// M). Result in MiB, rounded up. "0" is allowed (means "all of the node").
absl::StatusOr<uint64_t> ParseMemoryMb(std::string_view text);

// The array a job is a task of (job_array.h), for %A and %a.
struct ArrayTaskIds {
  uint64_t array_job_id = 0;
  uint32_t task_id = 0;
};

// Expands sbatch filename patterns: %j job id, %x job name, %u user, %A the
// array's job id and %a the task's index (for a job that is no array task,
// %A is its job id and %a 4294967294, as in Slurm), %%, and leaves other
// %-sequences unchanged (they are expanded per node/task later).
std::string ExpandFilenamePattern(
    std::string_view pattern, uint64_t job_id, std::string_view job_name,
    std::string_view user,
    std::optional<ArrayTaskIds> array_task = std::nullopt);

}  // namespace gantry
