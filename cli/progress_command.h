// `gantry progress` and `gantry checkpoint`, from inside a job: report
// progress (which resets --hang-timeout), or a completed checkpoint that a
// restart resumes from (GANTRY_RESUME_FROM). Returns the process exit code
// and prints errors as "gantry progress: error: ..." (or "gantry
// checkpoint: ...").
#pragma once

#include <cstdint>
#include <string>

namespace gantry::cli {

// From inside a job (GANTRY_JOB_ID) or for --job: a completed checkpoint
// (`path` non-empty) or plain progress.
int RunProgressCommand(const std::string& controller, const std::string& job,
                       const std::string& path, int64_t step);

}  // namespace gantry::cli
