// The trace simulator's output: one table (or one JSON document) comparing
// the policies run on the same trace and cluster. Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "daemon/simulator/simulation.h"

namespace gantry::sim {

struct RunInfo {
  std::string trace_path;
  std::string format;
  int rows_read = 0;            // jobs parsed from the file
  int skipped_rows = 0;         // malformed rows
  int cpu_only_rows = 0;        // 0-GPU rows, left out by rule
  int not_run_rows = 0;         // rows with no start/end time, left out by rule
  int fractional_gpu_rows = 0;  // GPU shares rounded up to a whole GPU
  int jobs_in_window = 0;       // after --start/--span/--limit
  SimConfig config;
};

// A header (trace, cluster, model factors) and one row per policy:
// util, delay mean/p50/p99 (s), JCT mean (s), multi-node jobs, share on the
// fewest leaves, mean leaves per multi-node job, backfilled, Schedule calls,
// wall time.
std::string FormatTable(const RunInfo& info,
                        const std::vector<PolicyReport>& reports);

// The same as one JSON object (per-job outcomes left out).
std::string FormatJson(const RunInfo& info,
                       const std::vector<PolicyReport>& reports);

}  // namespace gantry::sim
