// libFuzzer target for the sbatch option parser, which reads user input
// (batch scripts and command lines).
//
// The input is treated as a script, as its directive words given on the
// command line, and as a time, memory size and filename pattern. Beyond
// "no crash": accepted requests stay within the documented limits and
// errors always carry a message.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "common/directive_lexer.h"
#include "common/filename_pattern.h"
#include "common/job_options.h"
#include "common/job_request.h"
#include "common/option_values.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

void CheckRequest(const gantry::JobRequest& request) {
  Check(!request.nodes || (*request.nodes >= 1 && *request.nodes <= 100'000));
  // A range is MIN below MAX, both in bounds.
  Check(!request.min_nodes || (request.nodes && *request.min_nodes >= 1 &&
                               *request.min_nodes < *request.nodes));
  Check(!request.ntasks ||
        (*request.ntasks >= 1 && *request.ntasks <= 10'000'000));
  Check(!request.cpus_per_task ||
        (*request.cpus_per_task >= 1 && *request.cpus_per_task <= 4096));
  Check(!request.gpus_per_node ||
        (*request.gpus_per_node >= 1 && *request.gpus_per_node <= 64));
  Check(!request.time_limit_seconds ||
        *request.time_limit_seconds <= 365ull * 24 * 3600);
  for (const std::string& warning : request.warnings) {
    Check(!warning.empty() && warning.find('\n') == std::string::npos);
  }
}

void CheckStatus(const absl::Status& status) {
  Check(status.ok() || !status.message().empty());
  Check(status.ok() || status.code() == absl::StatusCode::kInvalidArgument);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  gantry::JobRequest from_script;
  const absl::Status script_status =
      gantry::ApplyScriptDirectives(input, from_script);
  CheckStatus(script_status);
  if (script_status.ok()) CheckRequest(from_script);

  const absl::StatusOr<std::vector<std::string>> words =
      gantry::ExtractDirectiveWords(input);
  CheckStatus(words.status());
  // Extraction and application agree on what is a quoting error.
  Check(words.ok() || !script_status.ok());
  if (words.ok()) {
    gantry::JobRequest from_flags;
    const absl::Status flags_status =
        gantry::ApplyJobOptions(*words, "command line", from_flags);
    CheckStatus(flags_status);
    if (flags_status.ok()) CheckRequest(from_flags);
  }

  // The scalar parsers see short inputs in practice; bound the work.
  const std::string_view scalar = input.substr(0, 64);
  const absl::StatusOr<uint64_t> seconds = gantry::ParseTimeLimit(scalar);
  CheckStatus(seconds.status());
  if (seconds.ok()) Check(*seconds <= 365ull * 24 * 3600);
  CheckStatus(gantry::ParseMemoryMb(scalar).status());

  const std::string expanded =
      gantry::ExpandFilenamePattern(input, 1234567, "job", "user");
  // Each byte yields at most the longest replacement (a 10-digit id).
  Check(expanded.size() <= 16 * input.size() + 16);
  return 0;
}
