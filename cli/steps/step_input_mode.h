// srun -i/--input read into what the step's launch asks for and what srun
// itself sends (man srun, "IO Redirection"): by default srun's stdin goes
// to every task; "none" gives them /dev/null; a task id gives srun's stdin
// to that task alone; a file name is a path on srun's host that srun reads
// and sends to every task, unless it names a file per task (%t, %n, %N),
// which each task then opens on its node as the job's user. --pty gives
// task 0 the terminal instead. Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "gantry/v1/client.pb.h"

namespace gantry::cli {

struct StepInputChoice {
  v1::StepInput request;  // LaunchStepRequest.input
  // srun sends a stream to the tasks that connect (step_input_relay.h):
  // its own stdin, or the file `local_pattern` names (expanded once the
  // step is known, so %s works) when that is not empty.
  bool relay = false;
  std::string local_pattern;
};

// An empty value is "all", as srun takes it. INVALID_ARGUMENT for a value
// other than "all"/"none" with --pty.
absl::StatusOr<StepInputChoice> ChooseStepInput(std::string_view option,
                                                bool pty);

}  // namespace gantry::cli
