// An agent's report of the snapshots its node holds, for the in-memory
// checkpoint tests (memory_checkpoint_ledger_test, memory_checkpoint_
// feature_test).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <tuple>

#include "gantry/v1/agent.pb.h"

namespace gantry {

// Each entry: job, rank, step, and whether the node holds it as a replica.
inline v1::MemoryCheckpointReport HeldSnapshots(
    std::initializer_list<std::tuple<uint64_t, uint32_t, int64_t, bool>>
        entries) {
  v1::MemoryCheckpointReport report;
  for (const auto& [job, rank, step, replica] : entries) {
    v1::HeldMemoryCheckpoint& held = *report.add_held();
    held.set_job_id(job);
    held.set_rank(rank);
    held.set_step(step);
    held.set_replica(replica);
  }
  return report;
}

}  // namespace gantry
