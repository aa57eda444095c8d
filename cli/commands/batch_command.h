// `gantry batch`: sbatch's job. Reads the script's #SBATCH/#GANTRY
// directives, applies command-line options over them, and submits.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/job_request.h"
#include "gantry/v1/client.pb.h"

namespace gantry::cli {

struct BatchInvocation {
  std::vector<std::string> option_words;  // before the script path
  std::string script_path;                // empty: read standard input
  std::vector<std::string> script_args;
};

// The batch script sbatch --wrap=COMMAND submits: COMMAND under #!/bin/sh.
std::string WrapCommand(const std::string& command);

// Splits sbatch-style arguments: options (with their values) up to the
// first word that is not an option or an option's value, which is the
// script; the rest are the script's arguments. "--" ends the options.
// Errors: INVALID_ARGUMENT for an unknown option (with a suggestion).
absl::StatusOr<BatchInvocation> SplitBatchArguments(
    const std::vector<std::string>& args);

// Builds the submission from the script text and the request: the submit
// environment is exported (sbatch's default --export=ALL) and relative
// paths are resolved against the submit directory.
// `request` gets its derived resources resolved (ResolveDerivedResources),
// with any warnings that adds.
// Errors: INVALID_ARGUMENT for a script that is not a batch script or
// options that contradict each other.
absl::StatusOr<v1::SubmitRequest> BuildSubmitRequest(
    JobRequest& request, const std::string& script,
    const std::vector<std::string>& script_args, const std::string& submit_dir,
    char** environ_entries);

// A --dataset path as a job spec (or gantry cache prefetch) holds it:
// absolute (a relative one is taken from `working_dir`), in normal form,
// and naming a directory that exists here, since the nodes see the same
// shared storage. INVALID_ARGUMENT naming the dataset otherwise.
absl::StatusOr<std::string> DatasetPathForSpec(
    const DatasetDeclaration& dataset, const std::string& working_dir);

// What `gantry batch ARGS` submits: the request built from the script, its
// directives, the SBATCH_* variables and ARGS, as RunBatchCommand sends it
// (validate_only set for --test-only). `job` keeps the options' flags
// (--parsable, --wait, --quiet) and the warnings they raised, even when
// preparing fails; with -V only job.version is set. Without `allow_stdin`
// (gantry batch-stream, whose standard input is its list of jobs) a job
// must name a script file or --wrap.
// Errors: INVALID_ARGUMENT as the command would print them.
struct PreparedBatch {
  JobRequest job;
  v1::SubmitRequest submit;
};
absl::Status PrepareBatch(const std::vector<std::string>& args,
                          bool allow_stdin, PreparedBatch& prepared);

// The whole command; returns the process exit code.
int RunBatchCommand(const std::vector<std::string>& args,
                    const std::string& controller_flag);

// `gantry batch --help` (sbatch --help): the options are parsed by hand
// (sbatch's grammar: options, then the script and its arguments).
extern const char kBatchHelp[];

}  // namespace gantry::cli
