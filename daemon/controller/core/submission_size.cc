#include "daemon/controller/core/submission_size.h"

#include "absl/strings/str_cat.h"

namespace gantry {
namespace {

// What a record holds beyond its spec (ids, state, times, reasons), and the
// output and error paths resolved from their patterns, which are stored
// again in full.
constexpr uint64_t kRecordOverheadBytes = 512;

std::string Mebibytes(uint64_t bytes) {
  if (bytes % (1 << 20) == 0) return absl::StrCat(bytes >> 20, " MiB");
  return absl::StrCat(bytes, " bytes");
}

}  // namespace

SubmissionSize MeasureSubmission(const v1::JobSpec& spec, uint64_t tasks) {
  SubmissionSize size;
  size.tasks = tasks == 0 ? 1 : tasks;
  for (const std::string& arg : spec.script_args()) {
    size.script_args += arg.size() + 1;  // as exec(2) counts: NUL-terminated
  }
  // Key and value of each variable, with its "=" and NUL as in an envp.
  for (const auto& [key, value] : spec.environment()) {
    size.environment += key.size() + value.size() + 2;
  }
  // The whole encoded spec, but the environment (stored apart); what the
  // encoding adds per variable is counted with it, not with each task.
  const uint64_t encoded = spec.ByteSizeLong();
  const uint64_t spec_without_environment =
      encoded > size.environment ? encoded - size.environment : 0;
  size.per_task = spec_without_environment + kRecordOverheadBytes +
                  spec.output_pattern().size() + spec.error_pattern().size() +
                  2 * spec.working_dir().size();
  return size;
}

absl::Status CheckSubmissionSize(const SubmissionSize& size) {
  if (size.script_args > kMaxScriptArgsBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the script arguments are ", size.script_args,
                     " bytes; the limit is ", Mebibytes(kMaxScriptArgsBytes),
                     " (ARG_MAX: more could not be passed to the script)"));
  }
  if (size.per_task > kMaxTaskStoredBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the job stores ", size.per_task,
        " bytes per task (script, arguments, name, paths); the limit is ",
        Mebibytes(kMaxTaskStoredBytes)));
  }
  if (size.total() > kMaxSubmissionStoredBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the submission would store ", size.total(), " bytes (", size.tasks,
        " task(s) of ", size.per_task, " bytes, environment ", size.environment,
        "); the limit per submission is ", Mebibytes(kMaxSubmissionStoredBytes),
        size.tasks > 1
            ? "; use fewer array tasks or a shorter script and arguments (a "
              "task can read its index from SLURM_ARRAY_TASK_ID)"
            : ""));
  }
  return absl::OkStatus();
}

}  // namespace gantry
