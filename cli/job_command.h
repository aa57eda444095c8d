// `gantry job` (scontrol show job): one job's whole record, in scontrol's
// layout or as JSON, or its batch script. Returns the process exit code and
// prints errors as "gantry job: error: ...".
#pragma once

#include <string>

namespace gantry::cli {

// `job_id`: ID or ARRAYID_TASK. `script`: print only the batch script
// (owner and admins).
int RunJobCommand(const std::string& controller, const std::string& job_id,
                  bool json, bool script = false);

}  // namespace gantry::cli
