// The reason a running job shows while its nodes stage its datasets
// (squeue's REASON "Staging"): set when its launch goes out, cleared once
// every node reported every dataset staged (features/datasets/).
#pragma once

#include "gantry/v1/types.pb.h"

namespace gantry {

inline constexpr char kStagingReason[] = "Staging";

// Shows Staging (`staging`) or back to None; another reason (a hold, a
// straggler) is left as it is.
inline void ShowStaging(v1::JobRecord& record, bool staging) {
  // A running job's reason is otherwise "None".
  if (staging) {
    if (record.reason().empty() || record.reason() == "None") {
      record.set_reason(kStagingReason);
    }
  } else if (record.reason() == kStagingReason) {
    record.set_reason("None");
  }
}

}  // namespace gantry
