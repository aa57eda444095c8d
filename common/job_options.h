// The sbatch option table: option words, from `#SBATCH`/`#GANTRY` lines of a
// batch script and from the command line, applied to a JobRequest.
//
// The same table serves both sources so a directive and a flag always mean
// the same thing; command-line options are applied after the directives, so
// they win. Splitting a script's directives into words is
// directive_lexer.h's job, parsing the values (counts, times, memory sizes)
// option_values.h's, and what the options imply together, once all are
// applied, derived_resources.h's.
//
// Pure functions, thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/job_request.h"

namespace gantry {

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

}  // namespace gantry
