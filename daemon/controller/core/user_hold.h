// A user hold (sbatch -H, gantry hold / scontrol hold) as a pending job's
// record shows it: the flag and Slurm's reason, JobHeldUser, with what
// releases it. A held job is never queued for a pass. Pure, thread-safe.
#pragma once

#include "absl/strings/str_cat.h"
#include "gantry/v1/types.pb.h"

namespace gantry {

inline void MarkHeld(v1::JobRecord& record) {
  record.set_held(true);
  record.set_reason("JobHeldUser");
  record.set_reason_detail(
      absl::StrCat("held: starts only after gantry release ", record.id(),
                   " (scontrol release)"));
}

// Pending again; the next pass sets its reason.
inline void MarkReleased(v1::JobRecord& record) {
  record.set_held(false);
  record.set_reason("None");
  record.clear_reason_detail();
}

}  // namespace gantry
